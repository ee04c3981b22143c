// A search of two objectives that pull apart, to look at the run page's Pareto front:
//   jikken run ui/testdata/pareto.jsonnet && jikken ui
// A larger x lowers loss and slows the trial down; y only makes both worse, so the front is
// the trials with y near 0. A trial with x above 0.95 breaks the constraint mem_over <= 0.
{
  name: "pareto-demo",
  search: {
    name: "tune",
    cmd: |||
      awk 'BEGIN {
        x = ENVIRON["JIKKEN_PARAM_X"]; y = ENVIRON["JIKKEN_PARAM_Y"]
        printf "::metric loss=%g\n", 1 - sqrt(x) + 0.3 * y
        printf "::metric speed=%g\n", (1 - x) * (1 - 0.5 * y)
        printf "::metric mem_over=%g\n", x - 0.95
      }'
    |||,
    space: {
      x: { low: 0, high: 1 },
      y: { low: 0, high: 1 },
      width: [32, 64, 128],
    },
    objectives: [{ metric: "loss", direction: "min" }, { metric: "speed", direction: "max" }],
    constraints: ["mem_over"],
    sampler: "nsga2",
    trials: 60,
    parallel: 4,
    seed: 1,
  },
}
