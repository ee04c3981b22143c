// Package experiment turns a Jsonnet experiment file into a validated plan of trials: it
// evaluates the file, accepts combu's array form and jikken's richer object form (defaults,
// trials, matrix of params x seeds), expands the matrix (quoting each param for the spot of
// the shell command it stands in), and checks names and the dependency graph so that nothing
// starts when the file is wrong; every problem is reported at once, at its line in the source.
package experiment
