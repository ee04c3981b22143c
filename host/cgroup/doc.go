// Package cgroup reads and makes Linux control groups through the cgroup filesystem: the limits
// of the group this process runs in (what the host can offer), and one group per trial attempt
// with a memory limit and a CPU quota, its processes listed, killed and its out-of-memory kills
// counted. It works with cgroup v2 (a delegated subtree, or the whole hierarchy as root) and
// with cgroup v1 as root, and says why when it can do neither.
package cgroup
