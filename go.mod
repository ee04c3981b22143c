module github.com/jikken-dev/jikken

go 1.26.8

require (
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/google/go-jsonnet v0.22.0 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/rogpeppe/go-internal v1.16.0 // indirect
	github.com/spf13/cobra v1.10.2 // indirect
	github.com/spf13/pflag v1.0.9 // indirect
	golang.org/x/crypto v0.45.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/term v0.47.0 // indirect
	sigs.k8s.io/yaml v1.4.0 // indirect
)
