// jikken's demo: three optimisation algorithms x four benchmark functions x 30 seeds.
// A pre-run step builds the trial program, the matrix runs it, and a final step compares the
// algorithms on the results that have landed in the store.
//
//   jikken run examples/optimize/experiment.jsonnet
//
// Pass -j N to change how many trials run at once, --tla-str seeds=5 for a quicker look.
function(seeds=30) {
  name: "optimize",
  defaults: { timeout: "2m" },
  trials: [
    // The pre-run step: build the trial program once, for every trial to use.
    { name: "build", cmd: "go build -o bin/opt ./opt" },
    // The final step: compare the algorithms, paired by seed, and show the verdicts.
    { name: "compare", cmd: "sh summarize.sh", after: ["opt"], show: true },
  ],
  matrix: {
    name: "opt",
    params: {
      algo: ["random-search", "es", "de"],
      fn: ["sphere", "rastrigin", "rosenbrock", "ackley"],
    },
    seeds: if std.isString(seeds) then std.parseInt(seeds) else seeds,
    cmd: "bin/opt",
    after: ["build"],
  },
}
