package cmdutil

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// CompleteList completes a comma-separated list of values (--profiles a,b,c): the values not
// yet given, after what was typed up to the last comma.
func CompleteList(values ...string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		done, last := "", toComplete
		if i := strings.LastIndexByte(toComplete, ','); i >= 0 {
			done, last = toComplete[:i+1], toComplete[i+1:]
		}
		given := strings.Split(strings.TrimSuffix(done, ","), ",")
		var out []string
		for _, v := range values {
			if strings.HasPrefix(v, last) && !slices.Contains(given, v) {
				out = append(out, done+v)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
}
