package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
	"github.com/pcourt/pcourt/services/compat-edge/internal/policy"
)

// resourcesKey holds the CompatibilityFamily layer as one JSON document,
// written whole by the compat-controller's leader: a resource deleted
// leaves the layer in the same write that keeps the others, and a reader
// never sees half of a change.
const resourcesKey = "pc:edge:compat:resources"

// resourceRecord is one family's settings as the controller resolved them
// from its governing resource.
type resourceRecord struct {
	Family     string            `json:"family"`
	Source     string            `json:"source"`
	GA         string            `json:"ga,omitempty"`
	Stage      string            `json:"stage,omitempty"`
	Brownouts  []span            `json:"brownouts,omitempty"`
	Extensions map[string]string `json:"extensions,omitempty"`
}

// saveIfChangedScript sets KEYS[1] to ARGV[1] unless it holds it already,
// and answers 1 when it wrote.
var saveIfChangedScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
return 1
`)

// SaveResources replaces the CompatibilityFamily layer with layer (one
// family's settings per governing, valid resource) and reports whether it
// changed. Saving the same layer twice writes nothing the second time.
func (s *Store) SaveResources(ctx context.Context, layer map[inventory.Family]policy.Settings) (bool, error) {
	records := []resourceRecord{}
	// In the inventory's order, so the same layer is the same bytes.
	for _, f := range inventory.Families {
		st, ok := layer[f]
		if !ok {
			continue
		}
		if err := st.Validate(); err != nil {
			return false, fmt.Errorf("%s settings from %s: %w", f, st.Source, err)
		}
		rec := resourceRecord{Family: string(f), Source: st.Source, GA: st.GA.String(), Stage: string(st.Stage)}
		for _, b := range st.Brownouts {
			rec.Brownouts = append(rec.Brownouts, span{Start: b.Start.UTC(), End: b.End.UTC()})
		}
		for id, d := range st.Extensions {
			if rec.Extensions == nil {
				rec.Extensions = map[string]string{}
			}
			rec.Extensions[id] = d.String()
		}
		records = append(records, rec)
	}
	doc, err := json.Marshal(records)
	if err != nil {
		return false, err
	}
	wrote, err := saveIfChangedScript.Run(ctx, s.rdb, []string{resourcesKey}, string(doc)).Int()
	if err != nil {
		return false, fmt.Errorf("saving the CompatibilityFamily layer: %w", err)
	}
	return wrote == 1, nil
}

// Resources returns the CompatibilityFamily layer the controller last
// saved; empty when it never saved one (no cluster, or Kubernetes off).
func (s *Store) Resources(ctx context.Context) (map[inventory.Family]policy.Settings, error) {
	doc, err := s.rdb.Get(ctx, resourcesKey).Result()
	if err == redis.Nil {
		return map[inventory.Family]policy.Settings{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the CompatibilityFamily layer: %w", err)
	}
	var records []resourceRecord
	if err := json.Unmarshal([]byte(doc), &records); err != nil {
		return nil, fmt.Errorf("the CompatibilityFamily layer: %w", err)
	}
	out := map[inventory.Family]policy.Settings{}
	for _, rec := range records {
		f, st, err := fromResourceRecord(rec)
		if err != nil {
			return nil, fmt.Errorf("the CompatibilityFamily layer: %w", err)
		}
		out[f] = st
	}
	return out, nil
}

func fromResourceRecord(rec resourceRecord) (inventory.Family, policy.Settings, error) {
	f := inventory.Family(rec.Family)
	if !f.Valid() {
		return f, policy.Settings{}, fmt.Errorf("unknown family %q", rec.Family)
	}
	st := policy.Settings{Stage: policy.Stage(rec.Stage), Source: rec.Source}
	var err error
	if rec.GA != "" {
		if st.GA, err = policy.ParseDate(rec.GA); err != nil {
			return f, policy.Settings{}, fmt.Errorf("%s: %w", f, err)
		}
	}
	for _, b := range rec.Brownouts {
		st.Brownouts = append(st.Brownouts, policy.Span{Start: b.Start, End: b.End})
	}
	for id, v := range rec.Extensions {
		d, err := policy.ParseDate(v)
		if err != nil {
			return f, policy.Settings{}, fmt.Errorf("%s: extension of %s: %w", f, id, err)
		}
		if st.Extensions == nil {
			st.Extensions = map[string]policy.Date{}
		}
		st.Extensions[id] = d
	}
	return f, st, st.Validate()
}

// LoadLayers returns both layers of the durable store, for the policy's
// refresh: the admin API's and the CompatibilityFamily resources'.
func (s *Store) LoadLayers(ctx context.Context) (policy.Layers, error) {
	admin, err := s.LoadAll(ctx)
	if err != nil {
		return policy.Layers{}, err
	}
	resources, err := s.Resources(ctx)
	if err != nil {
		return policy.Layers{}, err
	}
	return policy.Layers{Admin: admin, Resources: resources}, nil
}
