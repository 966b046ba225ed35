package jobreport

import (
	"encoding/json"
	"math"
)

// JSON has no NaN: a figure that is not known is null.

func opt(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

// MarshalJSON writes unknown figures as null.
func (g GPU) MarshalJSON() ([]byte, error) {
	type plain GPU
	return json.Marshal(struct {
		plain
		Util     *float64 `json:"util"`
		MemPeak  *float64 `json:"mem_peak"`
		MemTotal *float64 `json:"mem_total"`
	}{plain(g), opt(g.Util), opt(g.MemPeak), opt(g.MemTotal)})
}

type factsJSON struct {
	plainFacts
	Util          *float64 `json:"util"`
	MemShare      *float64 `json:"mem_share"`
	CPUEfficiency *float64 `json:"cpu_efficiency"`
}

type plainFacts Facts

func (f *Facts) json() factsJSON {
	return factsJSON{plainFacts(*f), opt(f.Util), opt(f.MemShare), opt(f.CPUEfficiency)}
}

// MarshalJSON writes unknown figures as null.
func (f Facts) MarshalJSON() ([]byte, error) { return json.Marshal(f.json()) }

// MarshalJSON writes the facts and the advice (Facts' own method would
// leave the advice out).
func (r Report) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		factsJSON
		Advice []Advice `json:"advice"`
	}{r.json(), r.Advice})
}
