package eval

import (
	"math"
	"testing"
)

func TestTextOverlap(t *testing.T) {
	tests := []struct {
		name       string
		a, b       string
		j, ab, ba  float64
		nearAsText bool
	}{
		{"identical", "one two three four five six", "One, two; three four five six.", 1, 1, 1, true},
		{"disjoint", "one two three four five six", "seven eight nine ten eleven twelve", 0, 0, 0, false},
		// a: 2 shingles, b: 4 shingles, 2 in common.
		{"contained", "a b c d e f", "a b c d e f g h", 0.5, 1, 0.5, true},
		{"contained reversed", "a b c d e f g h", "a b c d e f", 0.5, 0.5, 1, true},
		// 1 of 3 and 1 of 3 shingles in common.
		{"one shingle shared", "a b c d e f g", "x y a b c d e", 0.2, 1.0 / 3, 1.0 / 3, false},
		{"short texts are one shingle", "a b", "a b", 1, 1, 1, true},
		{"empty", "", "a b c d e", 0, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := wordShingles(tt.a, textShingle), wordShingles(tt.b, textShingle)
			j, ab, ba := textOverlap(a, b)
			for _, x := range [][2]float64{{j, tt.j}, {ab, tt.ab}, {ba, tt.ba}} {
				if math.Abs(x[0]-x[1]) > 1e-9 {
					t.Errorf("textOverlap = %.3f, %.3f, %.3f, want %.3f, %.3f, %.3f", j, ab, ba, tt.j, tt.ab, tt.ba)
					break
				}
			}
			if got := nearAsText(a, b); got != tt.nearAsText {
				t.Errorf("nearAsText = %v, want %v", got, tt.nearAsText)
			}
		})
	}
}

func TestTextDupLinks(t *testing.T) {
	s := &Set{
		Docs: []Doc{
			{ID: "mit", Text: []byte("permission is hereby granted free of charge to any person obtaining a copy")},
			{ID: "json", Text: []byte("permission is hereby granted free of charge to any person obtaining a copy the software shall be used for good not evil")},
			{ID: "bsd", Text: []byte("redistribution and use in source and binary forms with or without modification are permitted")},
			{ID: "mit2", Text: []byte("Permission is hereby granted, free of charge, to any person obtaining a copy")},
		},
		Label: func(later, earlier string) Label {
			fam := map[string]string{"mit": "mit", "mit2": "mit", "json": "json", "bsd": "bsd"}
			if fam[later] == fam[earlier] {
				return Positive
			}
			return Negative
		},
	}
	events := []Event{
		{ID: "json", Matches: []Match{{ID: "mit", Kind: "near"}}},                              // wrong, near as text
		{ID: "bsd", Matches: []Match{{ID: "mit", Kind: "partial"}}},                            // wrong, not near as text
		{ID: "mit2", Matches: []Match{{ID: "mit", Kind: "exact"}, {ID: "json", Kind: "near"}}}, // right; wrong, near as text
	}
	got := textDupLinks(s, events)
	if got.Right != 1 || got.Wrong != 3 || got.WrongText != 2 {
		t.Fatalf("right %d, wrong %d, wrong near as text %d; want 1, 3, 2", got.Right, got.Wrong, got.WrongText)
	}
	if got.ByKind["near"] != [2]int{2, 2} || got.ByKind["partial"] != [2]int{1, 0} {
		t.Errorf("by kind %v, want near 2 of 2, partial 0 of 1", got.ByKind)
	}
	if u, c := got.Unlabelled(), got.Ceiling(); u != 0.5 || math.Abs(c-1.0/3) > 1e-9 {
		t.Errorf("unlabelled precision %.3f, ceiling %.3f; want 0.5 and 0.333", u, c)
	}
	if (TextDupLinks{}).Ceiling() != 0 {
		t.Error("no judged link: ceiling not 0")
	}
}
