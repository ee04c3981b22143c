// Package s3 is the store.Blob of an S3 bucket (AWS, MinIO or any S3-compatible service), opened
// from URLs of the form s3://bucket/prefix. Importing it registers the "s3" scheme with
// store.Open.
//
// Endpoint, region, addressing style and credentials come from the standard AWS environment
// variables and an optional JSON config file (see Config); they are never part of the URL, so
// they never reach a manifest, a log or an error message.
package s3
