// Package evalguard evaluates an experiment file in a child process bounded in memory and time,
// so a hostile or careless file (std.range(0, 3e8), a string that doubles itself forever, an
// endless recursion) fails with an error naming the file and the limit instead of eating the
// machine's memory until Go aborts. go-jsonnet has no way to stop an evaluation from outside;
// a process can be stopped.
package evalguard
