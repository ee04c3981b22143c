// Package racing decides which configurations a race drops, as irace's F-race does: the
// configurations are evaluated block by block (an instance with a seed), and after the first
// blocks, and then after each few more, a Friedman test over the blocks so far, followed when it
// rejects by Conover's pairwise comparison of each configuration with the best, eliminates those
// worse than the best; with two left, a paired Wilcoxon signed-rank test. It is pure: the
// decision is a function of the results, replayed from the first block.
package racing
