package policy

import "github.com/pcourt/pcourt/services/compat-edge/internal/inventory"

// Overlay combines the CompatibilityFamily resources' settings with the
// admin API's (both kept in the durable store), family by family, into the
// one durable layer Resolve takes. The resource takes precedence over the
// admin API: its date and stage win where it sets them, and only the
// fields it leaves unset fall back to the admin API's. Two things are never taken away by either layer, because
// partners plan on them: every brownout scheduled in either is kept, and
// an integration's extension is the later of the two.
func Overlay(resources, durable map[inventory.Family]Settings) map[inventory.Family]Settings {
	out := map[inventory.Family]Settings{}
	for _, f := range inventory.Families {
		r, hasR := resources[f]
		d, hasD := durable[f]
		switch {
		case !hasR && !hasD:
			continue
		case !hasR:
			out[f] = d
			continue
		case !hasD:
			out[f] = r
			continue
		}
		s := Settings{GA: r.GA, Stage: r.Stage, Source: r.Source}
		if s.GA.IsZero() {
			s.GA, s.Source = d.GA, d.Source
		}
		if s.Stage == "" {
			s.Stage = d.Stage
		}
		s.Brownouts = append(append([]Span(nil), r.Brownouts...), d.Brownouts...)
		if len(r.Extensions)+len(d.Extensions) > 0 {
			s.Extensions = map[string]Date{}
			for _, layer := range []map[string]Date{r.Extensions, d.Extensions} {
				for id, until := range layer {
					if cur, ok := s.Extensions[id]; !ok || until.Time().After(cur.Time()) {
						s.Extensions[id] = until
					}
				}
			}
		}
		out[f] = s
	}
	return out
}
