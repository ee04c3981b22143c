package host

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// nvidia-smi output as drivers print it (UUIDs from public bug reports and fixtures).
const (
	queryA100MIG = "0, GPU-7fdaf0a5-179b-f636-d15d-daf243e3ff16, NVIDIA A100-SXM4-80GB, 81920 MiB, Enabled\n"
	queryMixed   = `0, GPU-513536b6-7d19-9063-b049-1e69664bb298, NVIDIA A100-SXM4-80GB, 81920 MiB, Enabled
1, GPU-d8594bd4-0fc3-8595-e355-7c98138f3b95, NVIDIA A100-SXM4-80GB, 81920 MiB, Disabled
2, GPU-5e375e7e-b41f-155b-dcdc-534524c356fc, NVIDIA A100-SXM4-80GB, 81920 MiB, Disabled
3, GPU-69ec2344-ebac-b028-f88f-452abb3d7f11, NVIDIA A100-SXM4-80GB, 81920 MiB, Disabled
`
	queryL4 = "0, GPU-00000000-0000-0000-0000-000000000001, NVIDIA L4, 23034 MiB, [N/A]\n"
	// --format=csv,noheader,nounits, a GPU whose memory the driver does not report, a name
	// with a comma.
	queryOdd = `0, GPU-41255406-c9af-f94b-4ebf-9d57ad1853da, NVIDIA A100 80GB PCIe, 81920, Enabled
1, GPU-932bfb2c-849a-2a22-1e84-9eff6bc02b39, Tesla V100-SXM2-16GB, [N/A], [N/A]
2, GPU-20bed2f5-819b-69ad-8d42-d3e1446080c1, Board, Rev 2, [Insufficient Permissions], [Not Supported]
`

	listDatadog = `GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-7fdaf0a5-179b-f636-d15d-daf243e3ff16)
  MIG 1g.10gb     Device  0: (UUID: MIG-feb88891-0321-5fef-9c87-d4af3b54259e)
  MIG 1g.10gb     Device  1: (UUID: MIG-a25704ba-3a06-5299-a795-fd7cf4d13973)
  MIG 1g.10gb     Device  2: (UUID: MIG-50f1c4c9-1508-5e8d-bb06-d08145b22e01)
  MIG 1g.10gb     Device  3: (UUID: MIG-36c795f2-5cf7-55d6-af30-e535e79b7bb6)
  MIG 1g.10gb     Device  4: (UUID: MIG-3f45d38c-8cee-503e-b806-a1f1bdceedeb)
  MIG 1g.10gb     Device  5: (UUID: MIG-96655de9-9525-58f9-a62b-0e4c1cc1c265)
  MIG 1g.10gb     Device  6: (UUID: MIG-1aae4990-b962-574e-8375-119d6d9b9687)
`
	listMixed = `GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-513536b6-7d19-9063-b049-1e69664bb298)
  MIG 1g.20gb     Device  0: (UUID: MIG-ce861fb0-a248-58ce-a9a8-f9adbc22a66a)
  MIG 1g.20gb     Device  1: (UUID: MIG-a45882f0-9215-5733-a0c1-49286ab31cb5)
  MIG 3g.40gb     Device  2: (UUID: MIG-f00d722c-f4e1-52c9-aa31-750441ae1bfe)
GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-d8594bd4-0fc3-8595-e355-7c98138f3b95)
GPU 2: NVIDIA A100-SXM4-80GB (UUID: GPU-5e375e7e-b41f-155b-dcdc-534524c356fc)
GPU 3: NVIDIA A100-SXM4-80GB (UUID: GPU-69ec2344-ebac-b028-f88f-452abb3d7f11)
`
	// Drivers before R470 named MIG devices by their GPU's UUID and instance ids.
	listOld = `GPU 0: A100-SXM4-40GB (UUID: GPU-5c89852c-d268-c3f3-1b07-005d5ae1dc3f)
  MIG 1g.5gb Device 0: (UUID: MIG-GPU-5c89852c-d268-c3f3-1b07-005d5ae1dc3f/7/0)
  MIG 1c.2g.10gb Device 1: (UUID: MIG-GPU-5c89852c-d268-c3f3-1b07-005d5ae1dc3f/3/0)
`
)

func TestParseQuery(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     []physical
	}{
		{"MIG on", queryA100MIG, []physical{{0, "GPU-7fdaf0a5-179b-f636-d15d-daf243e3ff16", "NVIDIA A100-SXM4-80GB", 81920, true}}},
		{"MIG on one of four", queryMixed, []physical{
			{0, "GPU-513536b6-7d19-9063-b049-1e69664bb298", "NVIDIA A100-SXM4-80GB", 81920, true},
			{1, "GPU-d8594bd4-0fc3-8595-e355-7c98138f3b95", "NVIDIA A100-SXM4-80GB", 81920, false},
			{2, "GPU-5e375e7e-b41f-155b-dcdc-534524c356fc", "NVIDIA A100-SXM4-80GB", 81920, false},
			{3, "GPU-69ec2344-ebac-b028-f88f-452abb3d7f11", "NVIDIA A100-SXM4-80GB", 81920, false},
		}},
		{"no MIG support", queryL4, []physical{{0, "GPU-00000000-0000-0000-0000-000000000001", "NVIDIA L4", 23034, false}}},
		{"nounits, unknown memory, comma in the name", queryOdd, []physical{
			{0, "GPU-41255406-c9af-f94b-4ebf-9d57ad1853da", "NVIDIA A100 80GB PCIe", 81920, true},
			{1, "GPU-932bfb2c-849a-2a22-1e84-9eff6bc02b39", "Tesla V100-SXM2-16GB", 0, false},
			{2, "GPU-20bed2f5-819b-69ad-8d42-d3e1446080c1", "Board, Rev 2", 0, false},
		}},
		{"no GPU", "", nil},
		{"blank lines", "\n" + queryL4 + "\n", []physical{{0, "GPU-00000000-0000-0000-0000-000000000001", "NVIDIA L4", 23034, false}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseQuery([]byte(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, got, cmp.AllowUnexported(physical{})); diff != "" {
				t.Errorf("parseQuery (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseQueryErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"0, GPU-1, A100, 81920 MiB\n", `line 1 "0, GPU-1, A100, 81920 MiB": want 5 comma-separated fields`},
		{queryL4 + "x, GPU-2, A100, 1 MiB, [N/A]\n", `line 2 "x, GPU-2, A100, 1 MiB, [N/A]": index "x" is not a number`},
		{"0, 1234, A100, 1 MiB, [N/A]\n", `uuid "1234" does not start with GPU-`},
		{queryL4 + queryL4, "is listed twice"},
		{"No devices were found\n", "want 5 comma-separated fields"},
	} {
		_, err := parseQuery([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("parseQuery(%q) = %v, want an error with %q", c.in, err, c.want)
		}
	}
}

func TestParseList(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     map[int][]migInstance
	}{
		{"seven 1g.10gb", listDatadog, map[int][]migInstance{0: {
			{0, "1g.10gb", "MIG-feb88891-0321-5fef-9c87-d4af3b54259e"}, {1, "1g.10gb", "MIG-a25704ba-3a06-5299-a795-fd7cf4d13973"},
			{2, "1g.10gb", "MIG-50f1c4c9-1508-5e8d-bb06-d08145b22e01"}, {3, "1g.10gb", "MIG-36c795f2-5cf7-55d6-af30-e535e79b7bb6"},
			{4, "1g.10gb", "MIG-3f45d38c-8cee-503e-b806-a1f1bdceedeb"}, {5, "1g.10gb", "MIG-96655de9-9525-58f9-a62b-0e4c1cc1c265"},
			{6, "1g.10gb", "MIG-1aae4990-b962-574e-8375-119d6d9b9687"},
		}}},
		{"one GPU of four", listMixed, map[int][]migInstance{0: {
			{0, "1g.20gb", "MIG-ce861fb0-a248-58ce-a9a8-f9adbc22a66a"}, {1, "1g.20gb", "MIG-a45882f0-9215-5733-a0c1-49286ab31cb5"},
			{2, "3g.40gb", "MIG-f00d722c-f4e1-52c9-aa31-750441ae1bfe"},
		}}},
		{"old driver", listOld, map[int][]migInstance{0: {
			{0, "1g.5gb", "MIG-GPU-5c89852c-d268-c3f3-1b07-005d5ae1dc3f/7/0"}, {1, "1c.2g.10gb", "MIG-GPU-5c89852c-d268-c3f3-1b07-005d5ae1dc3f/3/0"},
		}}},
		{"a warning line", "Warning: persistence mode is disabled on device 00000000:31:00.0.\n" + listDatadog[:strings.Index(listDatadog, "\n  MIG 1g.10gb     Device  1")+1],
			map[int][]migInstance{0: {{0, "1g.10gb", "MIG-feb88891-0321-5fef-9c87-d4af3b54259e"}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseList([]byte(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, got, cmp.AllowUnexported(migInstance{})); diff != "" {
				t.Errorf("parseList (-want +got):\n%s", diff)
			}
		})
	}
	for _, bad := range []string{
		"  MIG 1g.10gb     Device  0: (UUID: MIG-feb88891-0321-5fef-9c87-d4af3b54259e)\n",
		"GPU 0: A100 (UUID: GPU-1)\n  MIG 1g.10gb Device x: (UUID: MIG-1)\n",
		"GPU 0: A100 (UUID: GPU-1)\n  MIG 1g.10gb Device 0:\n",
	} {
		if _, err := parseList([]byte(bad)); err == nil || !strings.Contains(err.Error(), "not a MIG device under a GPU") {
			t.Errorf("parseList(%q) = %v, want an error", bad, err)
		}
	}
}

func TestProfileMiB(t *testing.T) {
	for p, want := range map[string]int64{
		"1g.10gb": 10240, "3g.40gb": 40960, "1c.3g.20gb": 20480, "1g.10gb+me": 10240, "1g.5gb": 5120, "7g.80gb": 81920,
		"weird": 0, "1g.xgb": 0, "": 0, "1g.0gb": 0,
	} {
		if got := profileMiB(p); got != want {
			t.Errorf("profileMiB(%q) = %d, want %d", p, got, want)
		}
	}
}

func TestParseSelection(t *testing.T) {
	for _, c := range []struct {
		in   string
		want selection
		err  string
	}{
		{"", selection{}, ""},
		{"all", selection{}, ""},
		{" none ", selection{none: true}, ""},
		{"0,2,3", selection{ids: []string{"0", "2", "3"}}, ""},
		{"0:1, GPU-7fdaf0a5-179b-f636-d15d-daf243e3ff16,MIG-feb88891-0321-5fef-9c87-d4af3b54259e", selection{ids: []string{"0:1", "GPU-7fdaf0a5-179b-f636-d15d-daf243e3ff16", "MIG-feb88891-0321-5fef-9c87-d4af3b54259e"}}, ""},
		{"0,,1", selection{}, `GPU list "0,,1" has an empty entry`},
		{"0,x", selection{}, `GPU list "0,x": "x" is not a GPU index (0, 1, ...), a MIG instance (0:1), a UUID (GPU-..., MIG-...), all or none`},
		{"-1", selection{}, `"-1" is not a GPU index`},
		{"0,0", selection{}, `GPU list "0,0" names 0 twice`},
		{"0;1", selection{}, "is not a GPU index"},
		{"none,0", selection{}, `"none" is not a GPU index`},
	} {
		got, err := parseSelection(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("parseSelection(%q) = %v, want an error with %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !cmp.Equal(got, c.want, cmp.AllowUnexported(selection{})) {
			t.Errorf("parseSelection(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
}

func TestUnitsAndPick(t *testing.T) {
	gpus, err := parseQuery([]byte(queryMixed))
	if err != nil {
		t.Fatal(err)
	}
	migs, err := parseList([]byte(listMixed))
	if err != nil {
		t.Fatal(err)
	}
	all, notes := units(gpus, migs)
	var idx []string
	for _, u := range all {
		idx = append(idx, u.Index+"="+u.UUID[:12]+"/"+u.MIG)
	}
	want := []string{"0:0=MIG-ce861fb0/1g.20gb", "0:1=MIG-a45882f0/1g.20gb", "0:2=MIG-f00d722c/3g.40gb", "1=GPU-d8594bd4/", "2=GPU-5e375e7e/", "3=GPU-69ec2344/"}
	if !cmp.Equal(idx, want) || len(notes) != 0 {
		t.Errorf("units = %v, %v; want %v", idx, notes, want)
	}
	if all[2].MemoryMiB != 40960 || all[3].MemoryMiB != 81920 || all[0].Name != "NVIDIA A100-SXM4-80GB" {
		t.Errorf("units' memory and names: %+v", all)
	}
	for _, c := range []struct {
		sel  string
		want []string
		err  string
	}{
		{"3,1", []string{"3", "1"}, ""},
		{"0", []string{"0:0", "0:1", "0:2"}, ""},
		{"GPU-513536b6-7d19-9063-b049-1e69664bb298,0:1", []string{"0:0", "0:1", "0:2"}, ""},
		{"MIG-f00d722c-f4e1-52c9-aa31-750441ae1bfe,2", []string{"0:2", "2"}, ""},
		{"4", nil, "the GPU list names 4, which nvidia-smi does not show; it shows 0:0 (MIG-ce861fb0-a248-58ce-a9a8-f9adbc22a66a), 0:1"},
		{"0:3", nil, "names 0:3, which nvidia-smi does not show"},
	} {
		sel, err := parseSelection(c.sel)
		if err != nil {
			t.Fatal(err)
		}
		got, err := sel.pick(all, gpus)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("pick(%s) = %v, want an error with %q", c.sel, err, c.err)
			}
			continue
		}
		var gotIdx []string
		for _, u := range got {
			gotIdx = append(gotIdx, u.Index)
		}
		if err != nil || !cmp.Equal(gotIdx, c.want) {
			t.Errorf("pick(%s) = %v, %v; want %v", c.sel, gotIdx, err, c.want)
		}
	}

	// A GPU in MIG mode without instances offers nothing, and says so.
	gpus, _ = parseQuery([]byte(queryA100MIG))
	all, notes = units(gpus, nil)
	if len(all) != 0 || len(notes) != 1 || !strings.Contains(notes[0], "GPU 0 (GPU-7fdaf0a5-179b-f636-d15d-daf243e3ff16) is in MIG mode without MIG instances") {
		t.Errorf("units of a MIG GPU without instances = %v, %v", all, notes)
	}
	sel, _ := parseSelection("0")
	if _, err := sel.pick(all, gpus); err == nil || !strings.Contains(err.Error(), "in MIG mode without MIG instances; create instances") {
		t.Errorf("pick of a MIG GPU without instances: %v", err)
	}
}

func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{queryA100MIG, queryMixed, queryL4, queryOdd, "", "0,GPU-1,,,\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		gpus, err := parseQuery([]byte(s))
		if err != nil {
			return
		}
		for _, g := range gpus {
			if g.index < 0 || !strings.HasPrefix(g.uuid, "GPU-") || g.memoryMiB < 0 {
				t.Errorf("parseQuery(%q) gave %+v", s, g)
			}
		}
	})
}

func FuzzParseList(f *testing.F) {
	for _, s := range []string{listDatadog, listMixed, listOld, "", "MIG x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		migs, err := parseList([]byte(s))
		if err != nil {
			return
		}
		for _, ms := range migs {
			for _, m := range ms {
				if m.device < 0 || !strings.HasPrefix(m.uuid, "MIG-") || m.profile == "" {
					t.Errorf("parseList(%q) gave %+v", s, m)
				}
			}
		}
	})
}

func FuzzParseSelection(f *testing.F) {
	for _, s := range []string{"0,2,3", "none", "", "0:1,MIG-abc", "0,,1", "GPU-x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sel, err := parseSelection(s)
		if err != nil {
			return
		}
		for _, id := range sel.ids {
			if id == "" || strings.ContainsAny(id, ", \t") {
				t.Errorf("parseSelection(%q) gave id %q", s, id)
			}
		}
	})
}
