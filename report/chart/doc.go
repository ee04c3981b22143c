// Package chart draws jikken's plots with gonum/plot: box and strip plots of groups, convergence
// curves with inter-quartile bands, and Demšar's critical-difference diagram, written as PNG or
// SVG. Output is byte-identical for the same input, so plots can be golden-tested.
package chart
