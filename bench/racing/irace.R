# F-race reference: irace on the bench's tuning task (see README.md). Prints the chosen c and
# the experiments used. Usage: Rscript irace.R REP BUDGET [ITERATIONS] (0 or none: irace's own)
suppressMessages(library(irace))
args <- commandArgs(TRUE)
rep <- as.integer(args[1]); budget <- as.integer(args[2])
iterations <- if (length(args) > 2) as.integer(args[3]) else 0L
parameters <- readParameters(text = 'c "" c (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)')
target <- function(experiment, scenario) {
  c <- as.numeric(as.character(experiment$configuration$c))
  inst <- as.numeric(experiment$instance)
  # Noise of its own for each configuration, as in the Go side: no common random numbers.
  set.seed((experiment$seed %% 100000L) * 100L + as.integer(c))
  list(cost = (c - 7)^2 / 10 + inst + rnorm(1))
}
log <- tempfile(fileext = ".Rdata")
scenario <- list(targetRunner = target, instances = 1:10, maxExperiments = budget, seed = rep,
                 logFile = log, quiet = TRUE)
if (iterations > 0) scenario$nbIterations <- iterations
res <- irace(scenario = scenario, parameters = parameters)
load(log)
cat(as.character(res$c[1]), iraceResults$state$experimentsUsedSoFar, "\n")
