// Package host says what this machine offers to trials: the CPU cores and memory this process
// may use (the limits of the cgroup it runs in, else the whole machine) and the GPUs, whole or
// as MIG instances, that nvidia-smi shows or JIKKEN_GPUS names.
package host
