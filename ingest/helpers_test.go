package ingest

import "github.com/schedlens/schedlens/timeline"

func eventBuf() *timeline.Event { return new(timeline.Event) }
