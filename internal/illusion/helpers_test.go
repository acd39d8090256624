package illusion

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// hfImage and hfRow have the shape of the Hugging Face IllusionBench Parquet files:
// image is a struct of bytes and path (datasets.Image), image_name a string.
type hfImage struct {
	Bytes []byte  `parquet:"bytes,optional"`
	Path  *string `parquet:"path,optional"`
}

type hfRow struct {
	Image     *hfImage `parquet:"image,optional"`
	ImageName *string  `parquet:"image_name,optional"`
}

const hfFeatures = `{"info": {"features": {"image": {"_type": "Image"}, "image_name": {"dtype": "string", "_type": "Value"}}}}`

// pngEncoder reuses its compressor: a fresh one per image costs more than the rest of the
// test. Not safe for concurrent use; the tests using it are not parallel. Noise does not compress, so the size is about 4*side*side bytes either way.
var pngEncoder = &png.Encoder{CompressionLevel: png.NoCompression, BufferPool: &pngPool{}}

type pngPool struct{ b *png.EncoderBuffer }

func (p *pngPool) Get() *png.EncoderBuffer  { b := p.b; p.b = nil; return b }
func (p *pngPool) Put(b *png.EncoderBuffer) { p.b = b }

// pngBytes encodes a small noisy image; side 23-50 gives about 2-10 KB, like a thumbnail.
func pngBytes(tb testing.TB, seed, side int) []byte {
	tb.Helper()
	img := image.NewRGBA(image.Rect(0, 0, side, side))
	x := uint32(seed)*2654435761 + 1
	for i := 0; i < len(img.Pix); i += 4 {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = byte(x), byte(x>>8), byte(x>>16), 255
	}
	img.Set(0, 0, color.RGBA{1, 2, 3, 255})
	var b bytes.Buffer
	if err := pngEncoder.Encode(&b, img); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// writeHFParquet writes a Parquet file with one row per name, rowGroup rows per row group,
// and returns the image bytes of each row; side <= 0 varies the images from 2 to 10 KB. Every third row has a null path, as datasets
// writes for images given as bytes.
func writeHFParquet(tb testing.TB, path string, names []string, rowGroup, side int) [][]byte {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := parquet.NewGenericWriter[hfRow](f, parquet.KeyValueMetadata("huggingface", hfFeatures),
		parquet.Compression(&parquet.Snappy))
	imgs := make([][]byte, len(names))
	for i, name := range names {
		sd := side
		if sd <= 0 {
			sd = 23 + i%28
		}
		imgs[i] = pngBytes(tb, i, sd)
		row := hfRow{Image: &hfImage{Bytes: imgs[i]}, ImageName: &name}
		if i%3 != 0 {
			p := name
			row.Image.Path = &p
		}
		if _, err := w.Write([]hfRow{row}); err != nil {
			tb.Fatal(err)
		}
		if (i+1)%rowGroup == 0 {
			if err := w.Flush(); err != nil {
				tb.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return imgs
}

// readHFParquet reads back every row of a file written in the hfRow shape.
func readHFParquet(tb testing.TB, path string) ([]hfRow, *parquet.File) {
	tb.Helper()
	fh, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { fh.Close() })
	st, _ := fh.Stat()
	pf, err := parquet.OpenFile(fh, st.Size())
	if err != nil {
		tb.Fatal(err)
	}
	r := parquet.NewGenericReader[hfRow](pf)
	defer r.Close()
	rows := make([]hfRow, pf.NumRows())
	n, err := r.Read(rows)
	if int64(n) != pf.NumRows() {
		tb.Fatalf("read %d of %d rows: %v", n, pf.NumRows(), err)
	}
	return rows, pf
}

func parquetWriterFor[T any](f *os.File) *parquet.GenericWriter[T] {
	return parquet.NewGenericWriter[T](f)
}
