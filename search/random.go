package search

// randomSampler draws every param independently and uniformly (log params uniformly in the
// logarithm); it ignores the history.
type randomSampler struct{}

func newRandom(*options) (Sampler, error) { return randomSampler{}, nil }

func (randomSampler) Suggest(r Request) (Params, error) {
	g, err := compile(r.Space)
	if err != nil {
		return nil, err
	}
	return randomParams(g, rng(r.Seed, r.Number, streamRandom), nil), nil
}
