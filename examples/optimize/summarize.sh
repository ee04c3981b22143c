# Final step of the demo: print each algorithm's median best value per function.
# It reads the results of the trials before it from the store, through the jikken CLI.
set -e
jikken results "$JIKKEN_RUN_ID" -o csv | awk -F, '
  NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
  $col["status"] == "succeeded" && $col["algo"] != "" {
    key = $col["fn"] " " $col["algo"]; n[key]++; v[key, n[key]] = $col["best"]
  }
  END {
    for (key in n) {
      m = n[key]
      for (i = 1; i <= m; i++) a[i] = v[key, i]
      for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
      med = (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
      split(key, k, " ")
      printf "%-12s %-14s %6d %14.6g\n", k[1], k[2], m, med
    }
  }' | sort > "$JIKKEN_OUTPUT_DIR/medians.txt"
printf "%-12s %-14s %6s %14s\n" function algorithm trials "median best"
cat "$JIKKEN_OUTPUT_DIR/medians.txt"
