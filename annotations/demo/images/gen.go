//go:build ignore

// gen.go draws the small flat-colour demo images that annotations/demo/episodes.jsonl
// refers to. Run it from the repository root:
//
//	go run annotations/demo/images/gen.go
//
// Every image is 64×48 pixels and depicts exactly what the demo conversations say:
//
//	umbrella.png  a person in a red coat under a black umbrella, grey sky, wet ground
//	              with puddles, one tree on the right
//	apples.png    a white plate (left), five red apples (middle) and a green cup
//	              (right) on a brown table
//	street_1.png  Image 1: a red car on the left of a grey road, a person in a blue
//	              shirt standing on the right
//	street_2.png  Image 2: a person in a red shirt standing on a tall yellow platform
//	              on the left (the topmost person), a blue car on the right
//	park.png      a sun in the top-left corner, a tree left of centre with a brown dog
//	              lying in its shade just right of the trunk, an empty bench on the right
package main

import (
	"image"
	"image/color"
	"image/png"
	"log"
	"os"
	"path/filepath"
)

const (
	width  = 64
	height = 48
	outDir = "annotations/demo/images"
)

var (
	skyBlue   = color.RGBA{135, 190, 235, 255}
	skyGrey   = color.RGBA{110, 115, 125, 255}
	road      = color.RGBA{120, 120, 120, 255}
	pavement  = color.RGBA{170, 165, 155, 255}
	wetGround = color.RGBA{70, 75, 85, 255}
	puddle    = color.RGBA{120, 140, 170, 255}
	grass     = color.RGBA{90, 170, 80, 255}
	leaf      = color.RGBA{40, 130, 50, 255}
	trunk     = color.RGBA{110, 70, 40, 255}
	skin      = color.RGBA{240, 200, 160, 255}
	red       = color.RGBA{210, 30, 30, 255}
	blue      = color.RGBA{40, 80, 200, 255}
	darkBlue  = color.RGBA{30, 40, 70, 255}
	black     = color.RGBA{20, 20, 20, 255}
	window    = color.RGBA{180, 220, 240, 255}
	yellow    = color.RGBA{235, 200, 40, 255}
	wall      = color.RGBA{235, 225, 200, 255}
	table     = color.RGBA{140, 90, 50, 255}
	white     = color.RGBA{250, 250, 250, 255}
	cupGreen  = color.RGBA{50, 160, 70, 255}
	sun       = color.RGBA{255, 220, 60, 255}
	dogBrown  = color.RGBA{150, 100, 50, 255}
	bench     = color.RGBA{120, 80, 45, 255}
)

type canvas struct{ *image.RGBA }

func newCanvas(bg color.RGBA) canvas {
	c := canvas{image.NewRGBA(image.Rect(0, 0, width, height))}
	c.rect(0, 0, width, height, bg)
	return c
}

// rect fills [x0,x1)×[y0,y1).
func (c canvas) rect(x0, y0, x1, y1 int, col color.RGBA) {
	for y := y0; y < y1; y++ {
		for x := x0; x < x1; x++ {
			c.SetRGBA(x, y, col)
		}
	}
}

// ellipse fills the ellipse centred on (cx,cy) with radii rx, ry; with upperHalf only
// the part at or above cy is drawn (an umbrella canopy).
func (c canvas) ellipse(cx, cy, rx, ry int, col color.RGBA, upperHalf bool) {
	for y := cy - ry; y <= cy+ry; y++ {
		if upperHalf && y > cy {
			break
		}
		for x := cx - rx; x <= cx+rx; x++ {
			dx, dy := float64(x-cx)/(float64(rx)+0.3), float64(y-cy)/(float64(ry)+0.3)
			if dx*dx+dy*dy <= 1.0 {
				c.SetRGBA(x, y, col)
			}
		}
	}
}

// person draws a standing person whose feet are at (cx, feetY).
func (c canvas) person(cx, feetY int, shirt color.RGBA) {
	c.rect(cx-2, feetY-5, cx, feetY, darkBlue)   // left leg
	c.rect(cx+1, feetY-5, cx+3, feetY, darkBlue) // right leg
	c.rect(cx-3, feetY-12, cx+4, feetY-5, shirt) // body
	c.ellipse(cx, feetY-15, 2, 2, skin, false)   // head
}

// car draws a side-on car whose body spans [x0, x0+18) with wheels on groundY.
func (c canvas) car(x0, groundY int, body color.RGBA) {
	c.rect(x0, groundY-7, x0+18, groundY-2, body)    // lower body
	c.rect(x0+4, groundY-11, x0+14, groundY-7, body) // cabin
	c.rect(x0+5, groundY-10, x0+9, groundY-7, window)
	c.rect(x0+10, groundY-10, x0+13, groundY-7, window)
	c.ellipse(x0+4, groundY-1, 2, 2, black, false)
	c.ellipse(x0+14, groundY-1, 2, 2, black, false)
}

func (c canvas) tree(cx, groundY int) {
	c.rect(cx-1, groundY-12, cx+2, groundY, trunk)
	c.ellipse(cx, groundY-16, 7, 7, leaf, false)
}

func umbrella() canvas {
	c := newCanvas(skyGrey)
	c.rect(0, 30, width, height, wetGround)
	c.ellipse(12, 40, 6, 2, puddle, false)
	c.ellipse(40, 44, 8, 2, puddle, false)
	c.ellipse(55, 36, 4, 1, puddle, false)
	c.tree(52, 34)
	c.person(21, 40, red)
	c.ellipse(21, 21, 9, 5, black, true) // canopy above the head
	c.rect(21, 21, 22, 30, black)        // handle down to the hand
	return c
}

func apples() canvas {
	c := newCanvas(wall)
	c.rect(0, 28, width, height, table)
	c.ellipse(8, 29, 6, 2, white, false) // plate on the left
	for i := 0; i < 5; i++ {             // five apples in the middle
		x := 19 + i*8
		c.ellipse(x, 27, 3, 3, red, false)
		c.rect(x, 23, x+1, 25, trunk) // stalk
	}
	c.rect(56, 19, 62, 30, cupGreen) // cup on the right
	c.rect(62, 22, 64, 26, cupGreen) // handle
	return c
}

func street1() canvas {
	c := newCanvas(skyBlue)
	c.rect(0, 30, width, 36, pavement)
	c.rect(0, 36, width, height, road)
	c.car(4, 44, red)      // red car on the left
	c.person(50, 35, blue) // person in blue on the right, on the pavement
	return c
}

func street2() canvas {
	c := newCanvas(skyBlue)
	c.rect(0, 30, width, 36, pavement)
	c.rect(0, 36, width, height, road)
	c.rect(6, 18, 20, 36, yellow) // tall yellow platform on the left
	c.person(13, 18, red)         // person in red standing on top of it
	c.car(42, 44, blue)           // blue car on the right
	return c
}

func park() canvas {
	c := newCanvas(skyBlue)
	c.rect(0, 28, width, height, grass)
	c.ellipse(5, 5, 4, 4, sun, false) // sun, top-left
	c.tree(22, 38)
	c.rect(25, 35, 33, 38, dogBrown)         // dog lying right of the trunk
	c.ellipse(33, 34, 2, 2, dogBrown, false) // head
	c.rect(47, 32, 61, 34, bench)            // bench seat on the right
	c.rect(47, 28, 61, 30, bench)            // backrest
	c.rect(48, 34, 50, 38, bench)
	c.rect(58, 34, 60, 38, bench)
	return c
}

func main() {
	images := map[string]canvas{
		"umbrella.png": umbrella(),
		"apples.png":   apples(),
		"street_1.png": street1(),
		"street_2.png": street2(),
		"park.png":     park(),
	}
	for name, c := range images {
		f, err := os.Create(filepath.Join(outDir, name))
		if err != nil {
			log.Fatal(err)
		}
		if err := png.Encode(f, c.RGBA); err != nil {
			log.Fatal(err)
		}
		if err := f.Close(); err != nil {
			log.Fatal(err)
		}
	}
}
