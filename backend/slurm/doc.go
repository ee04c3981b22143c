// Package slurm runs trials as Slurm batch jobs, through the cluster's own client commands
// (sbatch, squeue, scontrol, scancel), as a user at a login node would.
//
// Each attempt is one job. Its environment travels in a file handed to sbatch --export-file, and
// its command as the arguments of a fixed batch script, so no param or env value is ever read
// by a shell as code. The job's name carries the run id and its comment the trial and attempt,
// which is how Live finds a run's jobs from any shell. One squeue call per poll watches every
// job the backend started, whatever their number. The attempt folder must be on a filesystem
// the compute nodes share with the runner (a home or project folder, as on most clusters): the
// job writes its output files and logs there in place.
package slurm
