// Package safecsv writes CSV that spreadsheets cannot mistake for formulas: a cell that begins
// with '=', '+', '-', '@', a tab or a carriage return (and is not a number) is written with a
// leading single quote, as OWASP advises against CSV injection, and read back without it.
// Every CSV jikken writes goes through it: params, trial names and trial output are user data.
package safecsv
