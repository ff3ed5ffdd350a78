package console

// EventTableRows exposes the catalogue's table rows to the external tests.
var EventTableRows = eventTableRows
