package experiment

// edges returns, for each trial, the indices of the trials it waits for.
func edges(trials []Trial) [][]int {
	idx := make(map[string]int, len(trials))
	for i, t := range trials {
		idx[t.Name] = i
	}
	out := make([][]int, len(trials))
	for i, t := range trials {
		for _, d := range t.Depends {
			out[i] = append(out[i], idx[d.Trial])
		}
		for _, a := range t.After {
			out[i] = append(out[i], idx[a])
		}
	}
	return out
}

// findCycle returns the names along one dependency cycle (first name repeated at the end), or nil.
func findCycle(trials []Trial) []string {
	e := edges(trials)
	const (
		white = iota
		grey
		black
	)
	color := make([]int, len(trials))
	parent := make([]int, len(trials))
	var cycle []string
	var visit func(int) bool
	visit = func(u int) bool {
		color[u] = grey
		for _, v := range e[u] {
			switch color[v] {
			case grey:
				// u waits for v which (transitively) waits for u: walk back from u to v.
				path := []string{trials[v].Name}
				for w := u; w != v; w = parent[w] {
					path = append(path, trials[w].Name)
				}
				path = append(path, trials[v].Name)
				// path is v <- ... <- u <- v in "waits for" order reversed; present as waits-for.
				for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
					path[i], path[j] = path[j], path[i]
				}
				cycle = path
				return true
			case white:
				parent[v] = u
				if visit(v) {
					return true
				}
			}
		}
		color[u] = black
		return false
	}
	for i := range trials {
		if color[i] == white && visit(i) {
			return cycle
		}
	}
	return nil
}

// Levels groups trial indices by depth in the dependency graph: level 0 waits for nothing,
// level n waits only for trials in lower levels. The plan printed by validate uses it.
func Levels(trials []Trial) [][]int {
	e := edges(trials)
	depth := make([]int, len(trials))
	done := make([]bool, len(trials))
	var d func(int) int
	d = func(u int) int {
		if done[u] {
			return depth[u]
		}
		m := 0
		for _, v := range e[u] {
			m = max(m, d(v)+1)
		}
		depth[u], done[u] = m, true
		return m
	}
	var levels [][]int
	for i := range trials {
		l := d(i)
		for len(levels) <= l {
			levels = append(levels, nil)
		}
		levels[l] = append(levels[l], i)
	}
	return levels
}
