// Package raceplan is the planner of raced matrices (experiment.Race): it adds the next blocks
// of the configurations still racing, as package racing decides after each test, and drops the
// pending trials of the configurations a test eliminated, with the test as the reason.
package raceplan
