package ghost

import (
	"io"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strings"
)

var secretNames = []string{".env", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", ".netrc", ".pgpass",
	"credentials", "credentials.json", ".npmrc", ".pypirc", "secrets.yaml", "secrets.yml", ".htpasswd"}
var secretExts = []string{".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".kdbx", ".gpg", ".asc", ".ovpn"}

// secretContents are what credentials look like inside a file, whatever its name: private key
// headers (PEM, OpenSSH, PGP; a GCP service-account key holds one too) and cloud access keys.
var secretContents = []struct {
	re   *regexp.Regexp
	what string
}{
	{regexp.MustCompile(`-----BEGIN ((RSA|DSA|EC|OPENSSH|ENCRYPTED|PGP) )?PRIVATE KEY( BLOCK)?-----`), "a private key"},
	{regexp.MustCompile(`\b(AKIA|ASIA)[0-9A-Z]{16}\b`), "an AWS access key"},
	{regexp.MustCompile(`AccountKey=[A-Za-z0-9+/]{40,}={0,2}`), "an Azure storage account key"},
	{regexp.MustCompile(`\b(gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{40,})\b`), "a GitHub token"},
}

// secretScanLimit bounds how much of one file is read for secretContents.
const secretScanLimit = 8 << 20

// secretReason says why the untracked file at full (rel in the repository) looks like it holds
// credentials, or "" when it does not: its name, else its first secretScanLimit bytes.
func secretReason(full, rel string, fi fs.FileInfo) string {
	base := strings.ToLower(path.Base(rel))
	named := strings.HasPrefix(base, ".env.")
	for _, n := range secretNames {
		named = named || base == n
	}
	for _, e := range secretExts {
		named = named || strings.HasSuffix(base, e)
	}
	if named {
		return "looks like a secret"
	}
	if !fi.Mode().IsRegular() {
		return ""
	}
	f, err := os.Open(full)
	if err != nil {
		return ""
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, secretScanLimit))
	if err != nil {
		return ""
	}
	for _, c := range secretContents {
		if c.re.Match(data) {
			return "holds what looks like " + c.what
		}
	}
	return ""
}
