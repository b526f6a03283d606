package replicatest

import "github.com/quiverhq/quiver/internal/turnstream"

// Event is one server-sent event of a turn's stream (turnstream.Event).
type Event = turnstream.Event

// Stream is an open event stream (turnstream.Stream).
type Stream = turnstream.Stream

// Turn is one turn's event stream, read to its end (turnstream.Turn).
type Turn = turnstream.Turn
