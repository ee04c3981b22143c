package s3

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoadConfigEnvOverFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s3.json")
	os.WriteFile(file, []byte(`{"endpoint":"http://file:9000","region":"eu-west-1","path_style":false,
		"access_key_id":"FILEKEY","secret_access_key":"file-secret"}`), 0o600)
	c, err := LoadConfig(env(map[string]string{"JIKKEN_S3_CONFIG": file}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Endpoint != "http://file:9000" || c.Region != "eu-west-1" || *c.PathStyle || c.AccessKeyID != "FILEKEY" || c.SecretAccessKey != "file-secret" {
		t.Fatalf("from file: %+v", c)
	}
	c, err = LoadConfig(env(map[string]string{
		"JIKKEN_S3_CONFIG": file, "AWS_ENDPOINT_URL": "http://generic:1", "AWS_ENDPOINT_URL_S3": "http://s3only:2",
		"AWS_DEFAULT_REGION": "us-west-2", "JIKKEN_S3_PATH_STYLE": "true",
		"AWS_ACCESS_KEY_ID": "ENVKEY", "AWS_SECRET_ACCESS_KEY": "env-secret",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Endpoint != "http://s3only:2" || c.Region != "us-west-2" || !*c.PathStyle || c.AccessKeyID != "ENVKEY" || c.SecretAccessKey != "env-secret" {
		t.Fatalf("env over file: %+v", c)
	}
}

func TestConfigNeverPrintsSecrets(t *testing.T) {
	c := Config{AccessKeyID: "id", SecretAccessKey: "topsecret", SessionToken: "tok3n"}
	for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), fmt.Sprintf("%v", &c)} {
		if strings.Contains(s, "topsecret") || strings.Contains(s, "tok3n") {
			t.Errorf("secret printed: %s", s)
		}
	}
}

func TestLoadConfigErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"secret_access_key": "leaky", `), 0o600)
	for name, e := range map[string]map[string]string{
		"bad file":          {"JIKKEN_S3_CONFIG": bad},
		"missing file":      {"JIKKEN_S3_CONFIG": filepath.Join(t.TempDir(), "none.json")},
		"path style":        {"JIKKEN_S3_CONFIG": os.DevNull, "JIKKEN_S3_PATH_STYLE": "maybe"},
		"id without secret": {"JIKKEN_S3_CONFIG": os.DevNull, "AWS_ACCESS_KEY_ID": "x"},
	} {
		_, err := LoadConfig(env(e))
		if err == nil {
			t.Errorf("%s: no error", name)
		} else if strings.Contains(err.Error(), "leaky") {
			t.Errorf("%s: error shows the file's secret: %v", name, err)
		}
	}
}

func TestParseURL(t *testing.T) {
	for raw, want := range map[string]Location{
		"s3://bucket":            {Bucket: "bucket"},
		"s3://bucket/":           {Bucket: "bucket"},
		"s3://my.bucket/a/b/":    {Bucket: "my.bucket", Prefix: "a/b"},
		"s3://b-1/ü nicode/runs": {Bucket: "b-1", Prefix: "ü nicode/runs"},
	} {
		got, err := ParseURL(raw)
		if err != nil || got != want {
			t.Errorf("ParseURL(%q) = %+v, %v; want %+v", raw, got, err, want)
		}
	}
	for _, raw := range []string{"s3://", "s3://AB", "s3://b/../x", "s3://bucket/a//b", "s3://bucket/p?endpoint=x", "file://x", "s3://key:secret@bucket/p"} {
		_, err := ParseURL(raw)
		if err == nil {
			t.Errorf("ParseURL(%q) succeeded", raw)
		} else if strings.Contains(err.Error(), "secret") && strings.Contains(raw, "secret") && strings.Contains(err.Error(), "key:secret") {
			t.Errorf("ParseURL(%q) error shows the credentials: %v", raw, err)
		}
	}
}

func TestEndpoint(t *testing.T) {
	for _, tc := range []struct {
		in     string
		host   string
		secure bool
		ok     bool
	}{
		{"", "s3.amazonaws.com", true, true},
		{"http://127.0.0.1:9000", "127.0.0.1:9000", false, true},
		{"https://minio.example.com/", "minio.example.com", true, true},
		{"minio:9000", "", false, false},
		{"http://user:pw@host", "", false, false},
		{"http://host/bucket", "", false, false},
	} {
		host, secure, err := Config{Endpoint: tc.in}.endpoint()
		if (err == nil) != tc.ok || host != tc.host || secure != tc.secure {
			t.Errorf("endpoint(%q) = %q, %v, %v", tc.in, host, secure, err)
		}
		if err != nil && strings.Contains(err.Error(), "pw") {
			t.Errorf("endpoint(%q) error shows the password: %v", tc.in, err)
		}
	}
}

// FuzzParseURL: an accepted URL names a valid bucket and a prefix that cannot climb out of it,
// and a rejected one never echoes what sat before an '@'.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"s3://bucket/p", "s3://a:b@bucket/p", "s3://b/../x", "s3://bucket//", "s3://b.c-d/ü/x y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		loc, err := ParseURL(raw)
		if err != nil {
			if i := strings.Index(raw, "@"); strings.HasPrefix(raw, "s3://") && i > len("s3://") {
				if userinfo := raw[len("s3://"):i]; len(userinfo) > 3 && !strings.Contains(userinfo, "/") && strings.Contains(err.Error(), userinfo) {
					t.Fatalf("error shows %q: %v", userinfo, err)
				}
			}
			return
		}
		if validBucket(loc.Bucket) != nil {
			t.Fatalf("accepted bucket %q", loc.Bucket)
		}
		for _, seg := range strings.Split(loc.Prefix, "/") {
			if loc.Prefix != "" && (seg == "" || seg == "." || seg == "..") {
				t.Fatalf("accepted prefix %q", loc.Prefix)
			}
		}
	})
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"s3://key:secret@bucket/p@x": "s3://***@bucket/p@x",
		"s3://a@b@bucket":            "s3://***@bucket",
		"http://u:pw@host:9000":      "http://***@host:9000",
		"s3://bucket/p@x":            "s3://bucket/p@x",
		"plain":                      "plain",
	} {
		if got := redactURL(in); got != want {
			t.Errorf("redactURL(%q) = %q, want %q", in, got, want)
		}
	}
}
