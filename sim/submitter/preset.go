package submitter

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// PresetConfig sizes a synthetic preset workload.
type PresetConfig struct {
	// Jobs is how many jobs to generate.
	Jobs int
	// ClusterGPUs and Load set the arrival rate so the offered GPU load (mean GPU-seconds per
	// job x rate / GPUs) is Load; Rate, if positive, sets jobs per second directly instead.
	ClusterGPUs int
	Load        float64
	Rate        float64
	// GPUsPerNode caps the GPUs of one pod; larger jobs become gangs (default 8).
	GPUsPerNode int
	// CPUPerGPU and MemoryPerGPU size pods (default 4 CPUs and 32 GiB per GPU).
	CPUPerGPU    float64
	MemoryPerGPU float64
	// MaxDuration truncates durations, in seconds (default 30 days).
	MaxDuration float64
}

// Presets lists the preset names.
var Presets = []string{"philly", "gavel"}

// philly's numbers. Job sizes, their probabilities, and the 1- and 8-GPU log-normal duration
// parameters (ln seconds) follow the analysis of Microsoft's Philly trace (Jeon et al., "Analysis
// of Large-Scale Multi-Tenant GPU Clusters for DNN Training Workloads", USENIX ATC 2019) as given
// in issue 7; the 2- and 4-GPU parameters are interpolated linearly in log2(size) between them
// and 16/32-GPU jobs reuse the 8-GPU fit. User/VC shares: the four largest from the issue
// (.50/.20/.12/.09), the remaining .09 spread over 11 smaller users with decreasing shares.
var (
	phillySizes   = []float64{1, 2, 4, 8, 16, 32}
	phillyProbs   = []float64{.9317, .0221, .0227, .0200, .0024, .0008}
	phillyMu      = map[int]float64{1: 6.98, 2: 7.91, 4: 8.85, 8: 9.78, 16: 9.78, 32: 9.78}
	phillySigma   = map[int]float64{1: 1.84, 2: 2.11, 4: 2.39, 8: 2.66, 16: 2.66, 32: 2.66}
	phillyShares  = []float64{.50, .20, .12, .09, .025, .018, .013, .010, .007, .005, .004, .003, .002, .002, .001}
	phillyDiurnal = []float64{.5, .4, .35, .3, .3, .35, .5, .8, 1.1, 1.4, 1.6, 1.6, 1.4, 1.5, 1.6, 1.6, 1.5, 1.3, 1.1, .9, .8, .7, .65, .55}
)

// Preset returns the named preset as a Process: philly (bursty diurnal arrivals, Philly's size
// mix and per-size log-normal durations, 15 users) or gavel (Poisson arrivals, sizes 1/2/4/8 at
// 70/10/15/5 %, duration 60 x 10^U(1.5,3) s with probability .8 else 60 x 10^U(3,4) s, as in
// the Gavel paper, Narayanan et al., OSDI 2020).
func Preset(name string, cfg PresetConfig, rng *rand.Rand) (*Process, error) {
	if cfg.Jobs <= 0 {
		return nil, fmt.Errorf("preset %s: jobs must be positive", name)
	}
	if cfg.GPUsPerNode <= 0 {
		cfg.GPUsPerNode = 8
	}
	if cfg.CPUPerGPU <= 0 {
		cfg.CPUPerGPU = 4
	}
	if cfg.MemoryPerGPU <= 0 {
		cfg.MemoryPerGPU = 32 << 30
	}
	if cfg.MaxDuration <= 0 {
		cfg.MaxDuration = 30 * 86400
	}
	shape := Shape{CPUPerGPU: cfg.CPUPerGPU, MemoryPerGPU: cfg.MemoryPerGPU, MaxGPUsPerPod: cfg.GPUsPerNode}
	var diurnal Diurnal
	switch name {
	case "philly":
		c, err := NewChoice(phillySizes, phillyProbs)
		if err != nil {
			return nil, err
		}
		shape.GPUs = c
		shape.DurationByGPUs = map[int]Dist{}
		for _, g := range phillySizes {
			shape.DurationByGPUs[int(g)] = LogNormal{Mu: phillyMu[int(g)], Sigma: phillySigma[int(g)], Max: cfg.MaxDuration}
		}
		for i := range phillyShares {
			shape.Users = append(shape.Users, fmt.Sprintf("vc%02d", i+1))
		}
		shape.UserWeights = slices.Clone(phillyShares)
		diurnal = Diurnal{Hourly: phillyDiurnal, Burst: 1.5}
	case "gavel":
		c, err := NewChoice([]float64{1, 2, 4, 8}, []float64{70, 10, 15, 5})
		if err != nil {
			return nil, err
		}
		shape.GPUs = c
		m, err := NewMixture([]Dist{LogUniform{60, 1.5, 3}, LogUniform{60, 3, 4}}, []float64{.8, .2})
		if err != nil {
			return nil, err
		}
		shape.Duration = m
		for i := range 10 {
			shape.Users = append(shape.Users, fmt.Sprintf("user%02d", i+1))
		}
	default:
		return nil, fmt.Errorf("preset %q is unknown; use one of %v", name, Presets)
	}
	if err := shape.init(); err != nil {
		return nil, err
	}
	rate := cfg.Rate
	if rate <= 0 {
		if cfg.ClusterGPUs <= 0 || cfg.Load <= 0 {
			return nil, fmt.Errorf("preset %s: give a rate, or cluster GPUs and a target load", name)
		}
		perArrival := shape.meanGPUSeconds()
		if diurnal.Burst > 1 {
			perArrival *= diurnal.Burst
		}
		rate = cfg.Load * float64(cfg.ClusterGPUs) / perArrival
	}
	var arr Arrival = Poisson{Rate: rate}
	if name == "philly" {
		diurnal.Rate = rate / diurnal.meanFactor()
		arr = diurnal
	}
	return NewProcess(Process{Name: name, Arrival: arr, Shape: shape, Count: cfg.Jobs}, rng)
}
