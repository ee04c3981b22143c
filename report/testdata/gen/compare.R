# Regenerates ../golden_compare.json: what `jikken compare` must print, computed in plain R by
# following the rules of docs/analysis.md ("Failed trials, non-finite values and incomplete
# blocks"), so the Go tests check both the numbers and that the documented recipe is exact.
# Run from the repository root with: Rscript report/testdata/gen/compare.R
# (Debian: apt-get install r-base-core). The Go tests never need R.

num <- function(v) {
  if (length(v) == 0) return("[]")
  s <- ifelse(is.na(v), "null", sprintf("%.17g", v))
  paste0("[", paste(s, collapse = ", "), "]")
}
scalar <- function(v) if (is.null(v) || is.na(v)) "null" else sprintf("%.17g", v)
str <- function(s) paste0('"', s, '"')
obj <- function(...) {
  kv <- list(...)
  paste0("{", paste(sprintf('"%s": %s', names(kv), unlist(kv)), collapse = ", "), "}")
}
arr <- function(items) paste0("[", paste(items, collapse = ", "), "]")

# The documented rules, step by step.
compare <- function(file, by, metric, pair_by = NULL, direction = "unknown",
                    failed = NULL, alternative = "two.sided", alpha = 0.05) {
  d <- read.csv(file.path("report/testdata", file), colClasses = "character", na.strings = character(0))
  if (is.null(failed)) failed <- if (direction == "unknown") "drop" else "worst"
  st <- if ("status" %in% names(d)) d$status else rep("", nrow(d))
  raw <- trimws(d[[metric]])
  v <- suppressWarnings(as.numeric(raw))
  grouped <- d[[by]] != ""
  # Not a result: a trial that did not finish (any status but succeeded or failed), or an empty
  # metric of a trial that did not fail.
  none <- !(st %in% c("", "succeeded", "failed")) | (st != "failed" & raw == "")
  # A failure: a failed trial, or a value that is not a finite number.
  failure <- !none & (st == "failed" | !is.finite(v))
  # Worst: a number beyond every real value on the bad side; 1e300 minus any value of the data
  # rounds to 1e300, so paired differences with one failure tie, as in jikken.
  W <- if (direction == "higher") -1e300 else 1e300
  if (failed == "worst") v[failure] <- W else none <- none | failure
  keep <- grouped & !none
  levels <- unique(d[[by]][grouped])
  k <- length(levels)
  turn <- function(r, n) if (direction == "higher") n + 1 - r else r
  describe <- function(x) {
    f <- x[abs(x) != 1e300]
    n <- length(f)
    l <- max(qbinom(0.025, n, 0.5), 1)
    s <- sort(f)
    if (n == 0) return(list(median = NA, mean = NA, iqr = NA, lo = NA, hi = NA))
    list(median = median(f), mean = mean(f), iqr = IQR(f), lo = s[l], hi = s[n - l + 1])
  }
  groups <- c(); pairs <- c(); omnibus <- "null"; cd <- "null"; blocks <- "null"
  if (is.null(pair_by)) {
    g <- factor(d[[by]][keep], levels = levels)
    x <- v[keep]
    r <- turn(rank(x), length(x))
    for (lv in levels) {
      s <- describe(x[g == lv])
      groups <- c(groups, obj(name = str(lv), n = sum(g == lv), failed = sum(abs(x[g == lv]) == 1e300),
                              median = scalar(s$median), mean = scalar(s$mean), iqr = scalar(s$iqr),
                              lo = scalar(s$lo), hi = scalar(s$hi), mean_rank = scalar(mean(r[g == lv]))))
    }
    if (k > 2) {
      kw <- kruskal.test(x, g)
      omnibus <- obj(statistic = scalar(unname(kw$statistic)), p_value = scalar(kw$p.value))
    }
    test <- function(a, b) {
      xa <- x[g == a]; xb <- x[g == b]
      w <- suppressWarnings(wilcox.test(xa, xb, alternative = alternative))
      list(stat = unname(w$statistic), p = w$p.value, effect = unname(w$statistic) / (length(xa) * length(xb)))
    }
  } else {
    cols <- strsplit(pair_by, ",")[[1]]
    key <- do.call(paste, c(d[cols], sep = ","))
    bl <- unique(key[grouped])
    m <- matrix(NA_real_, nrow = length(bl), ncol = k)
    m[cbind(match(key[keep], bl), match(d[[by]][keep], levels))] <- v[keep]
    # An incomplete block goes, as friedman.test does with NA; every test then uses the rest.
    m <- m[complete.cases(m), , drop = FALSE]
    blocks <- scalar(nrow(m))
    mr <- turn(colMeans(t(apply(m, 1, rank))), k)
    for (j in seq_len(k)) {
      s <- describe(m[, j])
      groups <- c(groups, obj(name = str(levels[j]), n = nrow(m), failed = sum(abs(m[, j]) == 1e300),
                              median = scalar(s$median), mean = scalar(s$mean), iqr = scalar(s$iqr),
                              lo = scalar(s$lo), hi = scalar(s$hi), mean_rank = scalar(mr[j])))
    }
    if (k > 2) {
      fr <- friedman.test(m)
      omnibus <- obj(statistic = scalar(unname(fr$statistic)), p_value = scalar(fr$p.value))
      cd <- scalar(qtukey(1 - alpha, k, Inf) / sqrt(2) * sqrt(k * (k + 1) / (6 * nrow(m))))
    }
    test <- function(a, b) {
      xa <- m[, match(a, levels)]; xb <- m[, match(b, levels)]
      w <- suppressWarnings(wilcox.test(xa, xb, paired = TRUE, alternative = alternative))
      dd <- xa - xb
      dd <- dd[dd != 0]
      rk <- rank(abs(dd))
      rb <- if (length(dd) == 0) 0 else (sum(rk[dd > 0]) - sum(rk[dd < 0])) / sum(rk)
      list(stat = unname(w$statistic), p = w$p.value, effect = rb)
    }
  }
  res <- list(); ps <- c()
  for (i in seq_len(k - 1)) for (j in (i + 1):k) {
    t <- test(levels[i], levels[j])
    res[[length(res) + 1]] <- c(levels[i], levels[j], t$stat, t$effect)
    ps <- c(ps, t$p)
  }
  adj <- p.adjust(ps, "holm")
  for (i in seq_along(res)) {
    pairs <- c(pairs, obj(a = str(res[[i]][1]), b = str(res[[i]][2]), statistic = res[[i]][3],
                          p_value = scalar(ps[i]), p_adjusted = scalar(adj[i]), effect = res[[i]][4]))
  }
  obj(file = str(file), by = str(by), metric = str(metric),
      pair_by = if (is.null(pair_by)) "null" else str(pair_by), direction = str(direction),
      failed = str(failed), alternative = str(alternative), blocks = blocks,
      groups = arr(groups), omnibus = omnibus, critical_difference = cd, pairs = arr(pairs))
}

cases <- c(
  compare("failed.csv", "algo", "loss", direction = "lower"),
  compare("failed.csv", "algo", "loss", pair_by = "seed", direction = "lower"),
  compare("failed.csv", "algo", "loss", pair_by = "seed", direction = "higher"),
  compare("failed.csv", "algo", "loss", direction = "unknown"),
  compare("failed.csv", "algo", "loss", pair_by = "seed", direction = "lower", failed = "drop"),
  compare("incomplete.csv", "algo", "loss", pair_by = "seed", direction = "lower"),
  compare("single.csv", "algo", "loss", direction = "lower"),
  compare("one-block.csv", "algo", "loss", pair_by = "seed", direction = "lower"),
  compare("three-algos.csv", "algo", "loss", pair_by = "seed", direction = "lower", alternative = "less"),
  compare("three-algos.csv", "algo", "accuracy", alternative = "greater"),
  compare("three-algos.csv", "algo", "accuracy", pair_by = "seed", direction = "higher", alternative = "greater")
)
cat("{\n", '  "generator": ', str(R.version.string), ",\n",
    '  "cases": [\n    ', paste(cases, collapse = ",\n    "), "\n  ]\n}\n",
    sep = "", file = "report/testdata/golden_compare.json")
