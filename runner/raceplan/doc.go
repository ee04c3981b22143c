// Package raceplan is the planner of raced matrices (experiment.Race): it adds the next blocks
// of the configurations still racing, as package racing decides after each test, and drops the
// trials of the configurations a test eliminated, with the test as the reason (those that have
// started run on; their records note the test).
package raceplan
