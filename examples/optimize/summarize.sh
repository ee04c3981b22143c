# Final step of the demo. It reads the results of the trials before it from the store (through
# the jikken that runs it) and compares the three algorithms on their best value: on each
# benchmark function (paired by seed), then over all functions at once (Friedman over
# function x seed blocks, Demsar's method). Critical-difference diagrams (drawn only where the
# Friedman test is significant, as Demsar advises) and an HTML report are kept as this step's
# artifacts.
set -eu
out="$JIKKEN_OUTPUT_DIR/artifacts"
mkdir -p "$out"
for fn in sphere rastrigin rosenbrock ackley; do
  echo "== $fn"
  jikken compare "$JIKKEN_RUN_ID" --by algo --metric best --pair-by seed --where fn="$fn" --lower-is-better
  jikken plot "$JIKKEN_RUN_ID" --kind cd --by algo --metric best --pair-by seed --where fn="$fn" --lower-is-better --out "$out/cd-$fn.svg" ||
    echo "(no critical-difference diagram for $fn)"
done
echo "== all functions"
jikken compare "$JIKKEN_RUN_ID" --by algo --metric best --pair-by fn,seed --lower-is-better
jikken plot "$JIKKEN_RUN_ID" --kind cd --by algo --metric best --pair-by fn,seed --lower-is-better --out "$out/cd-all.svg"
jikken report "$JIKKEN_RUN_ID" --by algo --metric best:min --pair-by fn,seed --out "$out/report.html" >/dev/null
echo
echo "plots and report.html: runs/$JIKKEN_RUN_ID/trials/compare/artifacts/ in the store"
