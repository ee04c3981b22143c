# Final step of the demo. It reads the results of the trials before it from the store (through
# the jikken that runs it), and for each benchmark function compares the three algorithms on
# their best value, paired by seed (Friedman, then pairwise Wilcoxon signed-rank with Holm).
# The tables, a critical-difference plot per function and an HTML report are kept as this
# step's artifacts.
set -eu
out="$JIKKEN_OUTPUT_DIR/artifacts"
mkdir -p "$out"
jikken results "$JIKKEN_RUN_ID" -o csv > "$out/results.csv"
for fn in sphere rastrigin rosenbrock ackley; do
  # One function's rows (the header, then rows whose fn column is $fn).
  awk -F, -v fn="$fn" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "fn") c = i; print; next } $c == fn' \
    "$out/results.csv" > "$out/$fn.csv"
  echo "== $fn"
  jikken compare "$out/$fn.csv" --by algo --metric best --pair-by seed --lower-is-better
  jikken plot "$out/$fn.csv" --kind cd --by algo --metric best --pair-by seed --lower-is-better -o "$out/cd-$fn.svg"
done
jikken report "$JIKKEN_RUN_ID" --by algo --metric best:min -o "$out/report.html" >/dev/null
echo
echo "report: jikken logs $JIKKEN_RUN_ID compare; artifacts in the store under runs/$JIKKEN_RUN_ID/trials/compare/artifacts/"
