package cmdutil

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// Conventions makes a finished command tree behave as the docs promise, in one pass so no
// command can forget: every usage mistake (a wrong number of arguments, a missing required
// flag, an unknown flag, an unknown command or help topic) is a UsageError (exit 2) that names
// the command; a mistyped sub-command gets "did you mean" instead of the group's help and exit
// 0. Call it on the root after every command is added.
func Conventions(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return UsageError("%v (see '%s --help')", err, c.CommandPath())
	})
	// A group runs (to catch a mistyped sub-command) but its usage shows only "[command]".
	root.SetUsageTemplate(strings.Replace(root.UsageTemplate(), "{{if .Runnable}}",
		`{{if and .Runnable (not (index .Annotations "`+groupAnnotation+`"))}}`, 1))
	walk(root, func(c *cobra.Command) {
		switch {
		case c.Name() == "help" && c.HasParent() && c.Parent() == root:
			c.Run, c.RunE = nil, helpTopic
		case c.HasSubCommands() && !c.Runnable():
			// A group: bare, it shows its help; followed by a word, that word is a mistyped
			// sub-command.
			c.Args = cobra.ArbitraryArgs
			c.RunE = unknownSubcommand
			c.SuggestionsMinimumDistance = 2
			if c.Annotations == nil {
				c.Annotations = map[string]string{}
			}
			c.Annotations[groupAnnotation] = "true"
		default:
			c.Args = usageArgs(c.Args)
			c.PreRunE = requiredFirst(c.PreRunE, c.PreRun)
			c.PreRun = nil
		}
	})
}

// groupAnnotation marks the command groups Conventions made runnable.
const groupAnnotation = "jikken/group"

func walk(c *cobra.Command, fn func(*cobra.Command)) {
	fn(c)
	for _, sub := range c.Commands() {
		walk(sub, fn)
	}
}

// unknownSubcommand is the RunE of a command group.
func unknownSubcommand(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return c.Help()
	}
	return UsageError("%s", UnknownCommandMessage(c, args[0]))
}

// UnknownCommandMessage says that name is not a sub-command of c, with the closest names as
// suggestions.
func UnknownCommandMessage(c *cobra.Command, name string) string {
	msg := fmt.Sprintf("unknown command %q for %q", name, c.CommandPath())
	if s := closest(c, name); len(s) > 0 {
		msg += "; did you mean " + quoteJoin(s) + "?"
	}
	return msg + fmt.Sprintf(" (see '%s --help')", c.CommandPath())
}

// closest are the sub-commands of c nearest to name (fewest edits), of those cobra suggests.
func closest(c *cobra.Command, name string) []string {
	if c.SuggestionsMinimumDistance <= 0 {
		c.SuggestionsMinimumDistance = 2 // cobra's default, which SuggestionsFor does not apply
	}
	var best []string
	bestD := -1
	for _, s := range c.SuggestionsFor(name) {
		d := edits(strings.ToLower(name), strings.ToLower(s))
		switch {
		case bestD < 0 || d < bestD:
			best, bestD = []string{s}, d
		case d == bestD:
			best = append(best, s)
		}
	}
	return best
}

// edits is the Levenshtein distance between a and b.
func edits(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

func quoteJoin(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, " or ")
}

// helpTopic replaces cobra's help command, which prints "Unknown help topic" and exits 0.
func helpTopic(c *cobra.Command, args []string) error {
	target, rest, err := c.Root().Find(args)
	if err != nil || target == nil {
		return UsageError("unknown help topic %q (see '%s --help')", strings.Join(args, " "), c.Root().Name())
	}
	if len(rest) > 0 && target.HasSubCommands() {
		return UsageError("%s", UnknownCommandMessage(target, rest[0]))
	}
	return target.Help()
}

// usageArgs makes an argument-count error a UsageError naming the command; nil means cobra's
// default, which for a leaf command is any arguments.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	if check == nil {
		return nil
	}
	return func(c *cobra.Command, args []string) error {
		err := check(c, args)
		if err == nil || CodeOf(err) == ExitUsage {
			return err
		}
		return UsageError("%s: %v (see '%s --help')", subPath(c), err, c.CommandPath())
	}
}

// subPath is the command's path without the program's name, which the error's prefix says.
func subPath(c *cobra.Command) string {
	return strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ")
}

// requiredFirst checks the required flags and flag groups before the command's own PreRun, as
// usage errors: cobra checks them after PreRun and reports a plain error (exit 1).
func requiredFirst(preE func(*cobra.Command, []string) error, pre func(*cobra.Command, []string)) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, args []string) error {
		for _, check := range []func() error{c.ValidateRequiredFlags, c.ValidateFlagGroups} {
			if err := check(); err != nil {
				return UsageError("%s: %v (see '%s --help')", subPath(c), err, c.CommandPath())
			}
		}
		if preE != nil {
			return preE(c, args)
		}
		if pre != nil {
			pre(c, args)
		}
		return nil
	}
}
