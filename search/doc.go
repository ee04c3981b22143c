// Package search suggests the params of the next trial of an adaptive search (random, grid,
// scrambled Halton, multivariate TPE with a constant liar, CMA-ES, NSGA-II) and reads a search's
// result (Best, Importance). It is pure: no I/O, no clock, no goroutines; every suggestion is a
// function of its Request, drawn from a PCG generator keyed by the seed and the trial's number,
// so a resumed or replayed search makes the same suggestions.
//
// # Samplers
//
// random draws each param uniformly (log params in the logarithm; an int or stepped param
// gives each of its values an equal share). grid enumerates the space. halton is a
// quasi-random sequence: Halton's, with random digit permutations drawn from the seed (chosen
// over Sobol because it needs no table of direction numbers and scrambles simply). tpe is
// Optuna's multivariate TPE; cmaes is CMA-ES; nsga2 is NSGA-II for several objectives. Each
// sampler's doc comment in this package gives the details. Options (the experiment's sampler
// options; New refuses an unknown one), with their defaults:
//
//	grid    points (none): values of a continuous float, evenly spaced on its scale
//	tpe     n_startup_trials 10, n_ei_candidates 24, gamma 0.1, max_below 25,
//	        max_above 512, prior_weight 1, constant_liar true,
//	        bandwidth neighbours|scott, proposal marginals|joint, score blend|joint
//	cmaes   popsize 4+3ln(d), sigma0 1/6 (of the unit cube)
//	nsga2   population_size 50, crossover_prob 0.9, mutation_prob 1/params, swapping_prob 0.5
//
// Why not gonum's CmaEsChol: gonum.org/v1/gonum/optimize drives its methods through channels
// from a goroutine that owns the loop and draws every sample from one sequential generator.
// A search sampler must instead be asked "what next?" with a history it did not produce
// (points rounded to a step, trials that failed, trials suggested by another process before a
// resume) and answer from that alone. So this package has a small CMA-ES of its own that
// replays the finished generations of the history (cmaes.go), using gonum's mat for the
// eigendecomposition.
//
// # Performance
//
// TPE's cost grows with the "above" group. Beyond max_above kernels (256 by default) it is
// thinned deterministically: the newest quarter is kept, the older trials are cut into
// consecutive blocks, each represented by its middle member carrying the block's weight.
// Decoded history rows are cached by the identity of each observation's Params map (see
// Request). CMA-ES and NSGA-II cache the state after each complete generation.
//
// # Honest limits
//
// TPE treats an int or stepped param as continuous on an interval widened by half a step and
// scores the rounded point (Optuna integrates each kernel over the step instead). Conditional
// params are modelled per group of params sharing a condition, from the trials where the group
// was active (Optuna's group decomposition). With several objectives TPE splits by
// non-dominated front and crowding distance (Optuna's MOTPE uses hypervolume contributions);
// peeling the leading fronts costs O(n * front size), about 15 ms at 10,000 trials on two
// objectives with a long front. CMA-ES needs every member of a generation to finish before
// the generation counts: a trial that never reaches the history holds it back.
//
// A suggestion depends on the history as given: the same seed and the same history (the same
// trials finished, in the same Number order, with the same values) give the same params. The
// caller decides which trials a suggestion sees. Results are bit-for-bit the same on one
// architecture; Go may fuse multiplications and additions on arm64, so another architecture
// can differ in the last bits and, through a comparison, in a suggestion.
package search
