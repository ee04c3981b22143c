// Package experiment turns a Jsonnet experiment file into a validated plan of trials: it
// evaluates the file, accepts combu's array form and jikken's richer object form (defaults,
// trials, matrix of params x seeds), expands the matrix, and checks names and the dependency
// graph so that nothing starts when the file is wrong.
package experiment
