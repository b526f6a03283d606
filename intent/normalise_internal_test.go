package intent

import "testing"

// FuzzNormaliseASCII checks the ASCII fast path against the general one:
// for ASCII text the two must agree byte for byte.
func FuzzNormaliseASCII(f *testing.F) {
	for _, s := range []string{"", "  Search the WEB\tfor\n\ncats  ", "A\vB\fC\rD", "it's 6 * 7?", "\x00\x7f Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !isASCII(s) {
			if Normalise(s) != normaliseText(s) {
				t.Fatalf("Normalise(%q) is not the general path's answer", s)
			}
			return
		}
		if got, want := normaliseASCII(s), normaliseText(s); got != want {
			t.Fatalf("normaliseASCII(%q) = %q, the general path gives %q", s, got, want)
		}
	})
}

// FuzzYouTubeLink checks that the prefilter never hides a link the regular
// expression finds.
func FuzzYouTubeLink(f *testing.F) {
	for _, s := range []string{"https://www.youtube.com/watch?v=x", "YOUTU.BE/abc", "youtube.com/@someone", "YoUtUbE.CoM/shorts/x", "youtu"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := hasYouTubeLink(s), youtubeLink.MatchString(s); got != want {
			t.Fatalf("hasYouTubeLink(%q) = %v, the regular expression says %v", s, got, want)
		}
	})
}

func TestNormaliseASCIIFoldsCaseAndSpace(t *testing.T) {
	if got := Normalise("  Search THE\tweb\r\n for  Cats "); got != "search the web for cats" {
		t.Fatalf("Normalise = %q", got)
	}
}
