package s3

import "strings"

// CredentialEnv are the environment variables the store reads secrets from (see Config):
// whatever starts a trial removes them from the trial's environment, because a trial never
// needs them (its outputs are stored for it) and must not be able to read or leak them.
var CredentialEnv = []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "JIKKEN_S3_CONFIG"}

// WithoutCredentials returns env (KEY=VALUE entries) less the CredentialEnv variables.
func WithoutCredentials(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !isCredential(k) {
			out = append(out, kv)
		}
	}
	return out
}

func isCredential(name string) bool {
	for _, c := range CredentialEnv {
		if name == c {
			return true
		}
	}
	return false
}
