# Regenerates ../golden_r.json: reference values from R for the stats package's golden tests.
# Run from the repository root with: Rscript stats/testdata/gen/golden.R
# (Debian: apt-get install r-base-core). Inputs are written into the file, so the Go tests never
# depend on R's random number generator.

set.seed(20260101)

num <- function(v) {
  if (length(v) == 0) return("[]")
  s <- sprintf("%.17g", v)
  paste0("[", paste(s, collapse = ", "), "]")
}
scalar <- function(v) sprintf("%.17g", v)
str <- function(s) paste0('"', s, '"')
obj <- function(...) {
  kv <- list(...)
  paste0("{", paste(sprintf('"%s": %s', names(kv), unlist(kv)), collapse = ", "), "}")
}
arr <- function(items) paste0("[\n    ", paste(items, collapse = ",\n    "), "\n  ]")
mat <- function(m) paste0("[", paste(apply(m, 1, num), collapse = ", "), "]")

alts <- c("two.sided", "greater", "less")

# Two-sample cases: exact (no ties, both n < 50), approximate (ties, or n >= 50), n = 2 edges,
# complete separation (tiny exact and normal tails), and a boundary at 49/50.
two <- list(
  list(name = "small-exact", x = c(1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30),
       y = c(0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29)),
  list(name = "n2-vs-n2", x = c(1.5, 2.5), y = c(0.2, 3.1)),
  list(name = "n2-separated", x = c(5, 6), y = c(1, 2)),
  list(name = "n1-vs-n3", x = c(2.5), y = c(1, 2, 3)),
  list(name = "small-ties", x = c(1, 2, 2, 3, 4, 4, 5), y = c(2, 3, 3, 4, 6, 6, 7, 8)),
  list(name = "separated-20", x = 21:40 + 0.5, y = 1:20 + 0.25),
  list(name = "exact-49-vs-30", x = round(rnorm(49, 0.3), 6), y = round(rnorm(30), 6)),
  list(name = "normal-50-vs-10", x = round(rnorm(50, 0.5), 6), y = round(rnorm(10), 6)),
  list(name = "normal-ties-rounded", x = round(rnorm(80, 0.2), 1), y = round(rnorm(70), 1)),
  list(name = "separated-60", x = 61:120 + 0.5, y = 1:60 + 0.5),
  list(name = "unequal-ties", x = c(3, 3, 3, 3, 1), y = c(3, 3, 2, 3, 3, 3, 4, 3))
)
mw <- c()
for (cs in two) for (a in alts) {
  r <- suppressWarnings(wilcox.test(cs$x, cs$y, alternative = a))
  exact <- length(cs$x) < 50 && length(cs$y) < 50 && !any(duplicated(c(cs$x, cs$y)))
  w <- unname(r$statistic)
  a12 <- w / (length(cs$x) * length(cs$y))
  mw <- c(mw, obj(name = str(cs$name), alternative = str(a), x = num(cs$x), y = num(cs$y),
                  exact = tolower(exact), statistic = scalar(w), p_value = scalar(r$p.value),
                  a12 = scalar(a12), cliffs_delta = scalar(2 * a12 - 1)))
}

# Paired cases: exact, zeros (normal), ties (normal), n = 2, n = 49 / 60, all positive.
paired <- list(
  list(name = "small-exact", x = c(1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30),
       y = c(0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29)),
  list(name = "n2", x = c(1.5, 2.5), y = c(1.0, 3.5)),
  list(name = "n2-positive", x = c(2, 5), y = c(1, 2)),
  list(name = "zeros", x = c(1, 2, 3, 4, 5, 6, 7, 8), y = c(1, 2.5, 2, 3, 5, 4.2, 5, 9)),
  list(name = "ties", x = c(4, 5, 6, 7, 8, 9, 10, 12), y = c(3, 4, 5, 5, 6, 7, 8, 9)),
  list(name = "all-positive-20", x = (1:20) * 1.1 + 0.01 * (1:20)^2, y = rep(0, 20)),
  list(name = "exact-49", x = round(rnorm(49, 0.2), 6), y = round(rnorm(49), 6)),
  list(name = "normal-60", x = round(rnorm(60, 0.3), 6), y = round(rnorm(60), 6)),
  list(name = "normal-ties-zeros", x = round(rnorm(70, 0.1), 1), y = round(rnorm(70), 1))
)
sr <- c()
for (cs in paired) for (a in alts) {
  r <- suppressWarnings(wilcox.test(cs$x, cs$y, paired = TRUE, alternative = a))
  d <- cs$x - cs$y
  d <- d[d != 0]
  rk <- rank(abs(d))
  rb <- (sum(rk[d > 0]) - sum(rk[d < 0])) / sum(rk)
  exact <- length(d) < 50 && !any(duplicated(abs(d))) && all(cs$x != cs$y)
  sr <- c(sr, obj(name = str(cs$name), alternative = str(a), x = num(cs$x), y = num(cs$y),
                  exact = tolower(exact), statistic = scalar(unname(r$statistic)),
                  p_value = scalar(r$p.value), rank_biserial = scalar(rb)))
}

# Kruskal-Wallis: groups of unequal sizes, ties, n = 2 per group, many groups.
kw_cases <- list(
  list(name = "three-no-ties", g = list(c(2.9, 3.0, 2.5, 2.6, 3.2), c(3.8, 2.7, 4.0, 2.4), c(2.8, 3.4, 3.7, 2.2, 2.0))),
  list(name = "three-ties", g = list(c(1, 2, 2, 3), c(2, 3, 3, 4, 4), c(4, 5, 5, 1))),
  list(name = "n2-per-group", g = list(c(1.1, 2.2), c(3.3, 4.4), c(5.5, 6.6))),
  list(name = "five-groups", g = lapply(1:5, function(i) round(rnorm(12, i * 0.3), 2))),
  list(name = "strong", g = lapply(1:4, function(i) rnorm(30, i * 2)))
)
kw <- c()
for (cs in kw_cases) {
  r <- kruskal.test(cs$g)
  kw <- c(kw, obj(name = str(cs$name), groups = paste0("[", paste(sapply(cs$g, num), collapse = ", "), "]"),
                  statistic = scalar(unname(r$statistic)), df = scalar(unname(r$parameter)),
                  p_value = scalar(r$p.value)))
}

# Friedman: blocks x groups matrices, with and without ties within blocks.
fr_cases <- list(
  list(name = "three-by-five", m = matrix(c(1, 2, 3, 2, 3, 1, 1, 3, 2, 1, 2, 3, 3, 1, 2) + 0.1 * (1:15), ncol = 3, byrow = TRUE)),
  list(name = "ties", m = matrix(c(1, 1, 2, 2, 3, 3, 1, 2, 2, 3, 1, 3, 2, 2, 2, 1, 3, 2), ncol = 3, byrow = TRUE)),
  list(name = "two-blocks", m = matrix(c(0.5, 0.7, 0.9, 0.6, 0.4, 0.8), ncol = 3, byrow = TRUE)),
  list(name = "ten-by-twenty", m = matrix(round(rnorm(200, rep((1:10) * 0.2, 20)), 1), ncol = 10, byrow = TRUE)),
  list(name = "four-by-thirty", m = matrix(rnorm(120, rep(c(0, 0.5, 1, 1.5), 30)), ncol = 4, byrow = TRUE))
)
fr <- c()
for (cs in fr_cases) {
  r <- friedman.test(cs$m)
  mr <- colMeans(t(apply(cs$m, 1, rank)))
  fr <- c(fr, obj(name = str(cs$name), blocks = mat(cs$m), statistic = scalar(unname(r$statistic)),
                  df = scalar(unname(r$parameter)), p_value = scalar(r$p.value), mean_ranks = num(mr)))
}

holm_cases <- list(c(0.01, 0.04, 0.03, 0.005), c(0.5, 0.2, 0.9), c(1e-10, 0.049, 0.05, 0.2, 0.01, 0.6),
                   c(0.3), c(0.02, 0.02, 0.02))
holm <- sapply(holm_cases, function(p) obj(p = num(p), adjusted = num(p.adjust(p, "holm"))))

desc_cases <- list(c(3), c(2, 5), c(1, 2, 3, 4), c(7.5, 1.25, 3, 9, 4.5, 2), rnorm(25))
desc <- sapply(desc_cases, function(x) obj(x = num(x), median = scalar(median(x)),
                                            mean = scalar(mean(x)), iqr = scalar(IQR(x))))

# Distribution-free CI of the median: order statistics at l = qbinom(alpha/2, n, 1/2) (at least 1).
mci_cases <- list(c(3), c(2, 5), 1:5, 1:6, c(7.5, 1.25, 3, 9, 4.5, 2, 8, 6.5, 0.5, 11), round(rnorm(40), 3), round(rexp(101), 4))
mci <- c()
for (x in mci_cases) for (lev in c(0.95, 0.9)) {
  n <- length(x)
  l <- max(qbinom((1 - lev) / 2, n, 0.5), 1)
  s <- sort(x)
  mci <- c(mci, obj(x = num(x), level = scalar(lev), lo = scalar(s[l]), hi = scalar(s[n - l + 1])))
}

# Studentized range, infinite df: R's ptukey documents ~1e-8 accuracy, which bounds the check.
tk <- c()
for (k in c(2, 3, 5, 10, 20)) for (q in c(0.5, 1.5, 2.5, 3.5, 4.5)) {
  tk <- c(tk, obj(k = scalar(k), q = scalar(q), p = scalar(ptukey(q, k, Inf))))
}

cat("{\n",
    '  "generator": ', str(R.version.string), ",\n",
    '  "mann_whitney": ', arr(mw), ",\n",
    '  "signed_rank": ', arr(sr), ",\n",
    '  "kruskal_wallis": ', arr(kw), ",\n",
    '  "friedman": ', arr(fr), ",\n",
    '  "holm": ', arr(holm), ",\n",
    '  "describe": ', arr(desc), ",\n",
    '  "median_ci": ', arr(mci), ",\n",
    '  "ptukey_inf": ', arr(tk), "\n",
    "}\n", sep = "", file = "stats/testdata/golden_r.json")
