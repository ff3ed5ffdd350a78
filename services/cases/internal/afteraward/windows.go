package afteraward

import "time"

// Windows are the post-award deadlines of a rules version. Each runs from
// the served award's issue.
type Windows struct {
	// Requests is how long a side may ask for a correction, an
	// interpretation or an additional award. The award becomes final when
	// it lapses with no request pending.
	Requests time.Duration
}

const day = 24 * time.Hour

// WindowsByRules are the post-award windows of each rules version. A
// version's row never changes once a case is pinned to it.
var WindowsByRules = map[string]Windows{
	"pcourt-rules-2026-11": {Requests: 14 * day},
}
