package console_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/console/internal/console"
)

// A recovery's page says how many replays of how many were queued and how
// many were delivered; while the recovery still reads its window it does
// not know how many it will queue, and says how far it has read instead.
// Its figures are final only once the scan has ended and no replay waits
// to be sent; an empty window or a recovery with nothing to replay shows
// full bars once over, never a bar of zero length.
func TestARecoverysProgressInWords(t *testing.T) {
	tests := []struct {
		name                               string
		status, reason                     string
		total, scanned, scheduled          int
		pending, delivered, failed, cancel int
		want                               string
		finished                           bool
		bars                               [4]int
	}{
		{"just started", "running", "", 2000, 0, 0, 0, 0, 0, 0,
			"0 queued so far (0 of 2000 deliveries in the window read), 0 delivered.", false, [4]int{0, 2000, 0, 1}},
		{"reading, sending", "running", "", 2000, 500, 40, 30, 9, 1, 0,
			"40 queued so far (500 of 2000 deliveries in the window read), 9 delivered, 1 failed, 30 being sent.", false, [4]int{500, 2000, 10, 40}},
		{"read, still sending", "completed", "", 2000, 2000, 120, 8, 110, 2, 0,
			"120 of 120 queued, 110 delivered, 2 failed, 8 being sent.", false, [4]int{2000, 2000, 112, 120}},
		{"over", "completed", "", 2000, 2000, 120, 0, 118, 2, 0,
			"120 of 120 queued, 118 delivered, 2 failed. Done.", true, [4]int{2000, 2000, 120, 120}},
		{"an empty window", "completed", "", 0, 0, 0, 0, 0, 0, 0,
			"0 of 0 queued, 0 delivered. Done.", true, [4]int{1, 1, 1, 1}},
		{"cancelled when the endpoint was disabled", "cancelled", "endpoint_disabled", 2000, 500, 40, 0, 12, 0, 28,
			"40 of 40 queued, 12 delivered, 28 cancelled. The recovery was cancelled (endpoint disabled) before it read the whole window.", true, [4]int{500, 2000, 40, 40}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			summary, finished, bars := console.Progress(tt.status, tt.reason, tt.total, tt.scanned, tt.scheduled, tt.pending, tt.delivered, tt.failed, tt.cancel)
			require.Equal(t, tt.want, summary)
			require.Equal(t, tt.finished, finished)
			require.Equal(t, tt.bars, bars, "scan value, max; sent value, max")
		})
	}
}
