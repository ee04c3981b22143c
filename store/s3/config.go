package s3

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// DefaultRetryFor is how long a failing request is retried before the error is final. It
// outlasts a restart of the server (tens of seconds) but not an outage an operator must fix.
const DefaultRetryFor = 2 * time.Minute

// Secret is a credential string that never prints: fmt and encoding/json show "***".
type Secret string

// String implements fmt.Stringer.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "***"
}

// GoString implements fmt.GoStringer.
func (s Secret) GoString() string { return strconv.Quote(s.String()) }

// MarshalJSON implements json.Marshaler: a config written back out holds no secret.
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// Config is how to reach the bucket. It is read from the optional JSON file named by
// $JIKKEN_S3_CONFIG (default: <user config dir>/jikken/s3.json when it exists), then overridden
// by the environment:
//
//	AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL   endpoint, e.g. http://127.0.0.1:9000 (default AWS S3)
//	AWS_REGION, AWS_DEFAULT_REGION          region (default: asked from the bucket)
//	JIKKEN_S3_PATH_STYLE                    true: https://host/bucket/key; false: https://bucket.host/key
//	AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN
//	AWS_PROFILE, AWS_SHARED_CREDENTIALS_FILE  a profile of ~/.aws/credentials, when no key is given
//	JIKKEN_S3_RETRY_FOR                     how long transient failures are retried (default 2m)
type Config struct {
	Endpoint        string `json:"endpoint,omitempty"`
	Region          string `json:"region,omitempty"`
	PathStyle       *bool  `json:"path_style,omitempty"`
	AccessKeyID     string `json:"access_key_id,omitempty"`
	SecretAccessKey Secret `json:"secret_access_key,omitempty"`
	SessionToken    Secret `json:"session_token,omitempty"`
	Profile         string `json:"profile,omitempty"`
	// RetryFor is a Go duration ("90s"); empty means DefaultRetryFor.
	RetryFor string `json:"retry_for,omitempty"`
}

// LoadConfig reads the config file (if any) and the environment through getenv.
func LoadConfig(getenv func(string) string) (Config, error) {
	var c Config
	path, explicit := getenv("JIKKEN_S3_CONFIG"), true
	if path == "" {
		explicit = false
		if dir, err := os.UserConfigDir(); err == nil {
			path = filepath.Join(dir, "jikken", "s3.json")
		}
	}
	if path != "" {
		data, err := os.ReadFile(path)
		switch {
		case err == nil && len(bytes.TrimSpace(data)) == 0:
		case err == nil:
			if err := json.Unmarshal(data, &c); err != nil {
				// The JSON error may quote a fragment of the file, so it is left out.
				return c, fmt.Errorf("s3 config %s: not a JSON object of the documented fields; see docs/store.md", path)
			}
		case errors.Is(err, fs.ErrNotExist) && !explicit:
		default:
			return c, fmt.Errorf("s3 config: %w", err)
		}
	}
	set := func(dst *string, names ...string) {
		for _, n := range names {
			if v := getenv(n); v != "" {
				*dst = v
				return
			}
		}
	}
	set(&c.Endpoint, "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")
	set(&c.Region, "AWS_REGION", "AWS_DEFAULT_REGION")
	set(&c.Profile, "AWS_PROFILE")
	set(&c.RetryFor, "JIKKEN_S3_RETRY_FOR")
	if id := getenv("AWS_ACCESS_KEY_ID"); id != "" {
		c.AccessKeyID = id
		c.SecretAccessKey = Secret(getenv("AWS_SECRET_ACCESS_KEY"))
		c.SessionToken = Secret(getenv("AWS_SESSION_TOKEN"))
	}
	if v := getenv("JIKKEN_S3_PATH_STYLE"); v != "" && v != "auto" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return c, fmt.Errorf("JIKKEN_S3_PATH_STYLE=%q: want true, false or auto", v)
		}
		c.PathStyle = &b
	}
	if c.AccessKeyID != "" && c.SecretAccessKey == "" {
		return c, fmt.Errorf("s3 credentials: an access key id is set but no secret access key; set AWS_SECRET_ACCESS_KEY")
	}
	return c, nil
}

// retryFor parses RetryFor.
func (c Config) retryFor() (time.Duration, error) {
	if c.RetryFor == "" {
		return DefaultRetryFor, nil
	}
	d, err := time.ParseDuration(c.RetryFor)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("s3 retry_for %q: want a duration such as 90s", c.RetryFor)
	}
	return d, nil
}

// endpoint splits Endpoint into host[:port] and whether it uses TLS.
func (c Config) endpoint() (host string, secure bool, err error) {
	if c.Endpoint == "" {
		return "s3.amazonaws.com", true, nil
	}
	u, err := url.Parse(c.Endpoint)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", false, fmt.Errorf("s3 endpoint %q: want http://host[:port] or https://host[:port]", redactURL(c.Endpoint))
	}
	if u.User != nil {
		return "", false, fmt.Errorf("s3 endpoint %q: credentials do not belong in the endpoint; use AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY", redactURL(c.Endpoint))
	}
	if u.Path != "" && u.Path != "/" {
		return "", false, fmt.Errorf("s3 endpoint %q: want no path; put the bucket and prefix in the store URL", c.Endpoint)
	}
	return u.Host, u.Scheme == "https", nil
}

// Location is a parsed s3://bucket/prefix URL.
type Location struct {
	Bucket string
	// Prefix is prepended, with a slash, to every key; empty for the bucket's root.
	Prefix string
}

// ParseURL reads s3://bucket[/prefix]. The URL carries no credentials or endpoint.
func ParseURL(raw string) (Location, error) {
	rest, ok := strings.CutPrefix(raw, "s3://")
	if !ok {
		return Location{}, fmt.Errorf("store URL %q: want s3://bucket/prefix", redactURL(raw))
	}
	if strings.ContainsAny(rest, "?#") {
		return Location{}, fmt.Errorf("store URL %q: want s3://bucket/prefix without a query; the endpoint and region come from AWS_ENDPOINT_URL and AWS_REGION", redactURL(raw))
	}
	bucket, prefix, _ := strings.Cut(rest, "/")
	if strings.Contains(bucket, "@") {
		return Location{}, fmt.Errorf("store URL %q: credentials do not belong in the URL; use AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY", redactURL(raw))
	}
	if err := validBucket(bucket); err != nil {
		return Location{}, fmt.Errorf("store URL %q: %w", raw, err)
	}
	prefix = strings.Trim(prefix, "/")
	if prefix != "" {
		for _, seg := range strings.Split(prefix, "/") {
			if seg == "" || seg == "." || seg == ".." {
				return Location{}, fmt.Errorf("store URL %q: the prefix has an empty, '.' or '..' segment", raw)
			}
		}
	}
	return Location{Bucket: bucket, Prefix: prefix}, nil
}

// validBucket checks the S3 bucket naming rules that matter for addressing.
func validBucket(b string) error {
	if len(b) < 3 || len(b) > 63 {
		return fmt.Errorf("bucket name %q must be 3 to 63 characters", b)
	}
	for i, r := range b {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.'
		if !ok || (i == 0 || i == len(b)-1) && (r == '-' || r == '.') {
			return fmt.Errorf("bucket name %q: use lower-case letters, digits, '-' and '.', starting and ending with a letter or digit", b)
		}
	}
	return nil
}

// redactURL drops anything before an '@' in the host part, where a user might have put a key.
func redactURL(s string) string {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return s
	}
	host, path, hasPath := strings.Cut(rest, "/")
	at := strings.LastIndex(host, "@")
	if at < 0 {
		return s
	}
	out := scheme + "://***@" + host[at+1:]
	if hasPath {
		out += "/" + path
	}
	return out
}
