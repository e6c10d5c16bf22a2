package config

import (
	"encoding/json"
	"slices"
	"strings"
)

// BundleQuestion is a setting the MCP bundle (.mcpb) asks for at install:
// one entry of the manifest's user_config. Type, default and sensitivity
// follow from the setting (see bundleEntries).
type BundleQuestion struct {
	// Order is the question's place in the host's install dialog, from 1.
	Order int
	// Key is the user_config key; "" means the variable in lower case.
	Key string
	// Title and Description are the plain text the host shows.
	Title, Description string
	// Required marks a question without a default that must be answered.
	Required bool
}

// BundleFile is where docgen writes the bundle's user_config, relative to
// the repository root; tools/distpack embeds it.
const BundleFile = "tools/distpack/user_config.gen.json"

// bundleEntry is one entry of BundleFile: the user_config key, the
// variable it sets, and the manifest's option fields.
type bundleEntry struct {
	Key         string `json:"key"`
	Env         string `json:"env"`
	Type        string `json:"type"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Required    bool   `json:"required,omitempty"`
	Default     any    `json:"default,omitempty"`
	Sensitive   bool   `json:"sensitive,omitempty"`
}

// bundleEntries are the settings with a BundleQuestion, in Order. A boolean
// is "boolean" (default false), a _FILE variable a "file", anything else a
// "string" with the shown default ("" when none). A secret is sensitive.
func bundleEntries() []bundleEntry {
	var asked []Setting
	for _, s := range settings {
		if s.Bundle != nil {
			asked = append(asked, s)
		}
	}
	slices.SortFunc(asked, func(a, b Setting) int { return a.Bundle.Order - b.Bundle.Order })
	out := make([]bundleEntry, 0, len(asked))
	for _, s := range asked {
		q := s.Bundle
		e := bundleEntry{Key: q.Key, Env: s.Name, Type: "string", Title: q.Title, Description: q.Description,
			Required: q.Required, Sensitive: s.Secret}
		if e.Key == "" {
			e.Key = strings.ToLower(s.Name)
		}
		switch {
		case s.kind.boolean:
			e.Type = "boolean"
		case strings.HasSuffix(s.Name, "_FILE"):
			e.Type = "file"
		}
		switch {
		case q.Required:
		case s.kind.boolean:
			e.Default = false
		default:
			e.Default = s.kind.shown
		}
		out = append(out, e)
	}
	return out
}

// BundleUserConfig is the content of BundleFile: bundleEntries as indented
// JSON, in the order the host shows them.
func BundleUserConfig() []byte {
	b, err := json.MarshalIndent(bundleEntries(), "", "  ")
	if err != nil {
		panic(err) // strings and booleans always encode
	}
	return append(b, '\n')
}
