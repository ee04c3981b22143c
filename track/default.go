package track

// The functions below write through Default, for trials that need no more than one Tracker.

// LogMetric appends a metric line through Default.
func LogMetric(name string, value float64, opts ...MetricOption) error {
	t, err := Default()
	if err != nil {
		return err
	}
	return t.LogMetric(name, value, opts...)
}

// LogParams merges params into logged_params.json through Default.
func LogParams(params map[string]any) error {
	t, err := Default()
	if err != nil {
		return err
	}
	return t.LogParams(params)
}

// Result merges values into result.json through Default.
func Result(values map[string]any) error {
	t, err := Default()
	if err != nil {
		return err
	}
	return t.Result(values)
}

// SaveArtifact copies a file or folder under artifacts/ through Default.
func SaveArtifact(src string) (string, error) {
	t, err := Default()
	if err != nil {
		return "", err
	}
	return t.SaveArtifact(src)
}
