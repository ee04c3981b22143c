// The demo's comparison with sequential seeds: seeds are added 5 at a time to every algorithm and
// function until every pairwise verdict (over function x seed blocks) is settled, at most 30,
// with the family-wise error rate kept at 0.05 (docs/sequential.md).
//
//   jikken run examples/optimize/sequential.jsonnet
//   jikken compare latest --by algo --metric best --pair-by fn,seed --lower-is-better
{
  name: "optimize-sequential",
  defaults: { timeout: "2m" },
  trials: [
    { name: "build", cmd: "go build -o bin/opt ./opt" },
  ],
  matrix: {
    name: "opt",
    params: {
      algo: ["random-search", "es", "de"],
      fn: ["sphere", "rastrigin", "rosenbrock", "ackley"],
    },
    seeds: {
      until: { metric: "best", direction: "min", by: "algo", blocks: ["fn"] },
      min: 5, batch: 5, max: 30,
    },
    cmd: "bin/opt",
    after: ["build"],
  },
}
