package report

import (
	"encoding/json"
	"math"

	"github.com/jikken-dev/jikken/stats"
)

// The JSON document of a comparison: the contract of `jikken compare -o json`, documented in
// docs/analysis.md. Numbers are JSON numbers at full precision; a value that does not exist (the
// median of a group whose every trial failed, the omnibus test of two groups) is null.
type comparisonJSON struct {
	Metric             string         `json:"metric"`
	By                 string         `json:"by"`
	PairBy             *string        `json:"pair_by"`
	Blocks             *int           `json:"blocks"`
	Direction          string         `json:"direction"`
	Alternative        string         `json:"alternative"`
	Failed             string         `json:"failed"`
	Alpha              float64        `json:"alpha"`
	Groups             []groupJSON    `json:"groups"`
	Omnibus            *omnibusJSON   `json:"omnibus"`
	Pairwise           []pairJSON     `json:"pairwise"`
	CriticalDifference *float64       `json:"critical_difference"`
	NemenyiApplies     bool           `json:"nemenyi_applies"`
	RankedWorst        []droppedJSON  `json:"ranked_worst"`
	LeftOut            []droppedJSON  `json:"left_out"`
	LeftOutBlocks      []DroppedBlock `json:"left_out_blocks"`
	Notes              []string       `json:"notes"`
}

type groupJSON struct {
	Name     string      `json:"name"`
	N        int         `json:"n"`
	Failed   int         `json:"failed"`
	Median   *float64    `json:"median"`
	MedianCI *intervalCI `json:"median_ci"`
	Mean     *float64    `json:"mean"`
	IQR      *float64    `json:"iqr"`
	MeanRank float64     `json:"mean_rank"`
}

type intervalCI struct {
	Level float64 `json:"level"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
}

type omnibusJSON struct {
	Test        string  `json:"test"`
	Statistic   float64 `json:"statistic"`
	DF          int     `json:"df"`
	PValue      float64 `json:"p_value"`
	Significant bool    `json:"significant"`
}

type pairJSON struct {
	A              string     `json:"a"`
	B              string     `json:"b"`
	Test           string     `json:"test"`
	Statistic      float64    `json:"statistic"`
	PValue         float64    `json:"p_value"`
	PAdjusted      float64    `json:"p_adjusted"`
	Significant    bool       `json:"significant"`
	EffectSize     effectJSON `json:"effect_size"`
	Better         *string    `json:"better"`
	MeanRankDiff   float64    `json:"mean_rank_difference"`
	NemenyiDiffers *bool      `json:"nemenyi_differs"`
}

type effectJSON struct {
	Name      string  `json:"name"`
	Value     float64 `json:"value"`
	Magnitude string  `json:"magnitude"`
}

type droppedJSON struct {
	Row    int     `json:"row"`
	Trial  *string `json:"trial"`
	Reason string  `json:"reason"`
}

// MarshalJSON writes the documented document of `jikken compare -o json`.
func (c *Comparison) MarshalJSON() ([]byte, error) {
	alt := "two-sided"
	if c.Alternative != stats.TwoSided {
		alt = c.Alternative.String()
	}
	doc := comparisonJSON{
		Metric: c.Metric, By: c.By, Direction: c.Direction.String(), Alternative: alt,
		Failed: c.Failed, Alpha: c.Alpha, CriticalDifference: c.CriticalDifference,
		NemenyiApplies: c.NemenyiApplies(),
		Groups:         []groupJSON{}, Pairwise: []pairJSON{},
		RankedWorst: dropped(c.Worst), LeftOut: dropped(c.Dropped),
		LeftOutBlocks: c.DroppedBlocks, Notes: c.ReadingNotes(),
	}
	if doc.LeftOutBlocks == nil {
		doc.LeftOutBlocks = []DroppedBlock{}
	}
	if doc.Notes == nil {
		doc.Notes = []string{}
	}
	if c.PairBy != "" {
		doc.PairBy, doc.Blocks = &c.PairBy, &c.Blocks
	}
	for _, g := range c.Groups {
		gj := groupJSON{Name: g.Name, N: g.N, Failed: g.Failed, Median: finite(g.Median), Mean: finite(g.Mean),
			IQR: finite(g.IQR), MeanRank: g.MeanRank}
		if !math.IsNaN(g.MedianCI.Lo) {
			gj.MedianCI = &intervalCI{Level: 0.95, Lo: g.MedianCI.Lo, Hi: g.MedianCI.Hi}
		}
		doc.Groups = append(doc.Groups, gj)
	}
	if o := c.Omnibus; o != nil {
		doc.Omnibus = &omnibusJSON{Test: o.Test, Statistic: o.Statistic, DF: o.DF, PValue: o.PValue, Significant: o.PValue < c.Alpha}
	}
	for _, p := range c.Pairwise {
		pj := pairJSON{A: p.A, B: p.B, Test: p.Test, Statistic: p.Statistic, PValue: p.PValue, PAdjusted: p.PAdjusted,
			Significant: c.Significant(p), EffectSize: effectJSON{p.EffectSize.Name, p.EffectSize.Value, Magnitude(p.EffectSize)},
			MeanRankDiff: c.group(p.A).MeanRank - c.group(p.B).MeanRank}
		if b := c.Better(p); b != "" {
			pj.Better = &b
		}
		if c.CriticalDifference != nil {
			_, differs := c.NemenyiDiffer(p)
			pj.NemenyiDiffers = &differs
		}
		doc.Pairwise = append(doc.Pairwise, pj)
	}
	return json.Marshal(doc)
}

func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func dropped(ds []Dropped) []droppedJSON {
	out := []droppedJSON{}
	for _, d := range ds {
		dj := droppedJSON{Row: d.Row, Reason: d.Reason}
		if d.Trial != "" {
			dj.Trial = &d.Trial
		}
		out = append(out, dj)
	}
	return out
}
