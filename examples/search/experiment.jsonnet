// Tuning the demo's optimisers (examples/optimize) with a search: which algorithm, and which
// settings of it, find the lowest Rastrigin value in 4,000 evaluations? A TPE sampler proposes
// 60 settings; a median pruner stops the settings whose best-so-far curve is worse than the
// median of the finished trials at the same evaluation count.
//
//   jikken run examples/search/experiment.jsonnet -j 4
//   jikken search show latest          # the history, the best setting, each param's importance
//
// Every trial of the search is an ordinary trial: it runs on any backend, and 'jikken resume'
// continues the search with the same suggestions after a crash. See docs/search.md.
{
  name: "tune-optimizers",
  trials: [
    // Build the demo's trial program once; the search's trials wait for it (after).
    { name: "build", cmd: "go build -o bin/opt ../optimize/opt" },
  ],
  search: {
    name: "tune",
    after: ["build"],
    cmd: "bin/opt",
    timeout: "2m",
    // The function and the seed stay fixed: only the algorithm's settings vary.
    params: { fn: "rastrigin" },
    env: { JIKKEN_SEED: "1" },
    space: {
      algo: ["es", "de"],
      sigma: { low: 0.01, high: 5, log: true, when: { algo: "es" } },
      grow: { low: 1.05, high: 3, when: { algo: "es" } },
      f: { low: 0.1, high: 1.2, when: { algo: "de" } },
      cr: { low: 0, high: 1, when: { algo: "de" } },
      np: { type: "int", low: 5, high: 60, when: { algo: "de" } },
    },
    // opt logs its best-so-far as "best" every 200 evaluations, and writes the final one.
    objective: { metric: "best", direction: "min" },
    sampler: "tpe",
    pruner: "median",
    trials: 60,
    parallel: 4,
    seed: 1,
  },
}
