package sanctions

import (
	"embed"
	"fmt"
)

// The sample lists: a few entries cut unchanged from the real OFAC and UN publications (see
// testdata/README.md), for the tests and the `wagerail dev` demo.
//
//go:embed testdata/ofac-sdn-sample.csv testdata/ofac-alt-sample.csv testdata/un-sample.xml
var samples embed.FS

// SampleSources are the sources SampleFiles has files for, in ingestion order.
var SampleSources = []Source{OFAC, UN}

// SampleFiles returns the sample list files of src, in Parse's order (OFAC: the SDN file, then
// the alternate names file).
func SampleFiles(src Source) ([]File, error) {
	names := map[Source][]string{
		OFAC: {"testdata/ofac-sdn-sample.csv", "testdata/ofac-alt-sample.csv"},
		UN:   {"testdata/un-sample.xml"},
	}[src]
	if names == nil {
		return nil, fmt.Errorf("sanctions: no sample list for source %q", src)
	}
	files := make([]File, len(names))
	for i, n := range names {
		data, err := samples.ReadFile(n)
		if err != nil {
			return nil, fmt.Errorf("sanctions: sample %s: %w", n, err)
		}
		files[i] = File{Name: n, Data: data}
	}
	return files, nil
}
