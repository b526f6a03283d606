package embed

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Vector is an embedding of unit length.
type Vector []float32

// Unit returns raw scaled to unit length, and false when raw is zero or
// holds a value that is not finite.
func Unit(raw []float32) (Vector, bool) {
	var sum float64
	for _, x := range raw {
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, false
		}
		sum += f * f
	}
	if sum == 0 {
		return nil, false
	}
	inv := 1 / math.Sqrt(sum)
	out := make(Vector, len(raw))
	for i, x := range raw {
		out[i] = float32(float64(x) * inv)
	}
	return out, true
}

// Cosine is the cosine similarity of two unit vectors of one length: their
// dot product, in [-1, 1].
func Cosine(a, b Vector) float32 {
	if len(a) != len(b) {
		panic(fmt.Sprintf("embed: cosine of vectors of %d and %d dimensions", len(a), len(b)))
	}
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// The stored form of a vector: a version byte, the scale as a float32,
// then one signed byte per dimension (the component over the scale,
// rounded). A unit vector's components lie in [-1, 1], so a byte each
// keeps its direction to within about 0.4% of the largest one: cosine
// against the float form stays above 0.999 (TestQuantisedCosine), at a
// quarter of float32's size, and scans compare bytes.
const (
	packedVersion = 1
	packedHeader  = 5
	// MaxDims bounds a vector's dimension (the largest current models
	// have 3,072).
	MaxDims = 8192
)

// Packed is a vector in its stored form (Pack). Its similarity to a query
// is Packed.Cosine, without unpacking.
type Packed []byte

// Pack returns v's stored form. v must be a unit vector of at most MaxDims.
func Pack(v Vector) Packed {
	if len(v) == 0 || len(v) > MaxDims {
		panic(fmt.Sprintf("embed: packing a vector of %d dimensions", len(v)))
	}
	var peak float32
	for _, x := range v {
		peak = max(peak, float32(math.Abs(float64(x))))
	}
	scale := peak / 127
	out := make(Packed, packedHeader+len(v))
	out[0] = packedVersion
	binary.LittleEndian.PutUint32(out[1:], math.Float32bits(scale))
	for i, x := range v {
		q := math.Round(float64(x / scale))
		out[packedHeader+i] = byte(int8(max(-127, min(127, q))))
	}
	return out
}

// Dims is the packed vector's dimension.
func (p Packed) Dims() int { return len(p) - packedHeader }

// Check reports a stored form that Unpack and Cosine cannot read: a
// wrong version, no dimension, over MaxDims, or a scale that is not a
// positive finite number. Read a stored vector through it first.
func (p Packed) Check() error {
	switch {
	case len(p) <= packedHeader:
		return errors.New("embed: packed vector too short")
	case p[0] != packedVersion:
		return fmt.Errorf("embed: packed vector of version %d, want %d", p[0], packedVersion)
	case p.Dims() > MaxDims:
		return fmt.Errorf("embed: packed vector of %d dimensions, over %d", p.Dims(), MaxDims)
	}
	s := p.scale()
	if !(s > 0) || math.IsInf(float64(s), 0) {
		return errors.New("embed: packed vector with a bad scale")
	}
	return nil
}

func (p Packed) scale() float32 { return math.Float32frombits(binary.LittleEndian.Uint32(p[1:])) }

// Unpack returns the vector p stores, of unit length again.
func (p Packed) Unpack() (Vector, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	raw := make([]float32, p.Dims())
	s := p.scale()
	for i, b := range p[packedHeader:] {
		raw[i] = float32(int8(b)) * s
	}
	v, ok := Unit(raw)
	if !ok {
		return nil, errors.New("embed: packed vector is zero")
	}
	return v, nil
}

// Cosine is the similarity of the stored vector to the unit vector q of
// the same dimension (p must pass Check).
func (p Packed) Cosine(q Vector) float32 {
	if p.Dims() != len(q) {
		panic(fmt.Sprintf("embed: cosine of vectors of %d and %d dimensions", p.Dims(), len(q)))
	}
	var s float32
	for i, b := range p[packedHeader:] {
		s += float32(int8(b)) * q[i]
	}
	return s * p.scale()
}
