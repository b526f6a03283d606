package discordtest

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"strconv"
	"strings"
)

// avatarPNG is the picture the CDN serves for every set avatar: a real
// 16×16 PNG, so image.Decode in a client succeeds.
func avatarPNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 16, 16))
	for y := 0; y < 16; y++ {
		for x := 0; x < 16; x++ {
			img.Set(x, y, color.RGBA{R: uint8(x * 16), G: uint8(y * 16), B: 0x80, A: 0xff})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic("discordtest: encode avatar: " + err.Error())
	}
	return b.Bytes()
}

// AvatarPNG returns the bytes the CDN serves for a user's avatar.
func (s *Server) AvatarPNG() []byte { return bytes.Clone(s.png) }

func (s *Server) writePNG(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Content-Length", strconv.Itoa(len(s.png)))
	w.Write(s.png)
}

// serveAvatar answers /cdn/avatars/{user}/{hash}.png for a user whose
// avatar hash matches; the CDN needs no token.
func (s *Server) serveAvatar(w http.ResponseWriter, r *http.Request) {
	hash, isPNG := strings.CutSuffix(r.PathValue("file"), ".png")
	s.mu.Lock()
	u := s.w.users[r.PathValue("user")]
	found := u != nil && isPNG && hash != "" && u.Avatar == hash
	s.mu.Unlock()
	if !found {
		http.NotFound(w, r)
		return
	}
	s.writePNG(w)
}

// serveDefaultAvatar answers /cdn/embed/avatars/{0..5}.png.
func (s *Server) serveDefaultAvatar(w http.ResponseWriter, r *http.Request) {
	n, isPNG := strings.CutSuffix(r.PathValue("file"), ".png")
	if i, err := strconv.Atoi(n); !isPNG || err != nil || i < 0 || i > 5 {
		http.NotFound(w, r)
		return
	}
	s.writePNG(w)
}
