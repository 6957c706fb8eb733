/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-media-images.c - the PNG and JPEG validators, on samples built in
 * samples.c: chunk and marker structure, dimensions, CRCs, and other
 * formats hidden in chunks, segments and image data.  Each case names the
 * piece of the reason it expects, so a file rejected for the wrong cause
 * fails the test.
 */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "samples.h"
#include "util.h"
#include "validate.h"

/* Most cases expect no flags: leave .flags out. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
static const struct vcase vcases[] = {
	{ "png good rgba", "image/png", mk_png, PNG_GOOD, 0, NULL, -1 },
	{ "png good palette", "image/png", mk_png, PNG_PALETTE, 0, NULL, -1 },
	{ "png big idat", "image/png", mk_png, PNG_BIG_IDAT, 0, NULL, -1 },
	{ "png 100000x100000", "image/png", mk_png, PNG_HUGE, -1, "exceeds 50000000 pixels", -1 },
	{ "png bad crc", "image/png", mk_png, PNG_BAD_CRC, -1, "IDAT: CRC mismatch", -1 },
	{ "png truncated", "image/png", mk_png, PNG_TRUNCATED, -1, "truncated", -1 },
	{ "png data after IEND", "image/png", mk_png, PNG_AFTER_IEND, -1, "bytes after IEND", -1 },
	{ "png IHDR not first", "image/png", mk_png, PNG_IHDR_NOT_FIRST, -1, "first chunk", -1 },
	{ "png bad depth", "image/png", mk_png, PNG_BAD_DEPTH, -1, "bit depth 4 invalid", -1 },
	{ "png zero width", "image/png", mk_png, PNG_ZERO_WIDTH, -1, "bad dimensions", -1 },
	{ "png palette no PLTE", "image/png", mk_png, PNG_PALETTE_NO_PLTE, -1, "without PLTE", -1 },
	{ "png unknown critical", "image/png", mk_png, PNG_UNKNOWN_CRITICAL, -1,
	  "unknown critical chunk ABCD", -1 },
	{ "png no IDAT", "image/png", mk_png, PNG_NO_IDAT, -1, "no IDAT", -1 },
	{ "png split IDAT", "image/png", mk_png, PNG_SPLIT_IDAT, -1, "not consecutive", -1 },
	{ "png huge chunk length", "image/png", mk_png, PNG_HUGE_LENGTH, -1, "runs past the end",
	  -1 },
	{ "png bad signature", "image/png", mk_png, PNG_NO_SIGNATURE, -1, "bad signature", -1 },

	{ "jpeg good", "image/jpeg", mk_jpeg, JPEG_GOOD, 0, NULL, -1 },
	{ "jpeg progressive", "image/jpeg", mk_jpeg, JPEG_PROGRESSIVE, 0, NULL, -1 },
	{ "jpeg 65535x65535", "image/jpeg", mk_jpeg, JPEG_HUGE, -1, "exceeds 50000000 pixels", -1 },
	{ "jpeg no SOI", "image/jpeg", mk_jpeg, JPEG_NO_SOI, -1, "no SOI", -1 },
	{ "jpeg no EOI", "image/jpeg", mk_jpeg, JPEG_NO_EOI, -1, "no EOI", -1 },
	{ "jpeg data after EOI", "image/jpeg", mk_jpeg, JPEG_AFTER_EOI, -1, "bytes after EOI", -1 },
	{ "jpeg scan before frame", "image/jpeg", mk_jpeg, JPEG_SOS_FIRST, -1, "scan before frame",
	  -1 },
	{ "jpeg length past end", "image/jpeg", mk_jpeg, JPEG_BAD_LENGTH, -1, "runs past the end",
	  -1 },
	{ "jpeg two frames", "image/jpeg", mk_jpeg, JPEG_TWO_SOF, -1, "more than one frame", -1 },
	{ "jpeg zero height", "image/jpeg", mk_jpeg, JPEG_ZERO_HEIGHT, -1, "bad dimensions", -1 },

	{ "png ZIP in unknown chunk", "image/png", mk_png, PNG_ZIP_UNKNOWN_CHUNK, -1,
	  "unknown ancillary chunk zIPp of 300 bytes", -1 },
	{ "png small private chunk", "image/png", mk_png, PNG_SMALL_PRIVATE, 0, NULL, -1 },
	{ "png ZIP in tEXt", "image/png", mk_png, PNG_ZIP_IN_TEXT, -1,
	  "tEXt chunk holds a ZIP local header", -1 },
	{ "png HTML in iTXt", "image/png", mk_png, PNG_HTML_IN_ITXT, -1, "iTXt chunk holds a HTML <html",
	  -1 },
	{ "png ZIP in IDAT", "image/png", mk_png, PNG_ZIP_IN_IDAT, -1,
	  "ZIP end-of-central-directory record", -1 },
	{ "png signature in IDAT", "image/png", mk_png, PNG_SIG_IN_IDAT, 0, NULL, -1,
	  SBX_MEDIA_FLAG_EMBEDDED },
	{ "png Exif thumbnail", "image/png", mk_png, PNG_EXIF_THUMB, 0, NULL, -1 },
	{ "jpeg ZIP in COM", "image/jpeg", mk_jpeg, JPEG_ZIP_IN_COM, -1,
	  "COM segment holds a ZIP local header", -1 },
	{ "jpeg HTML in APP13", "image/jpeg", mk_jpeg, JPEG_HTML_IN_APP, -1,
	  "APPn segment holds a HTML <!doctype", -1 },
	{ "jpeg PNG in APP2", "image/jpeg", mk_jpeg, JPEG_PNG_IN_APP, -1,
	  "APPn segment holds a PNG signature", -1 },
	{ "jpeg JPEG in COM", "image/jpeg", mk_jpeg, JPEG_JPEG_IN_COM, -1,
	  "COM segment holds a JPEG SOI", -1 },
	{ "jpeg Exif thumbnail", "image/jpeg", mk_jpeg, JPEG_EXIF_THUMB, 0, NULL, -1 },
	{ "jpeg signature in scan", "image/jpeg", mk_jpeg, JPEG_SIG_IN_SCAN, 0, NULL, -1,
	  SBX_MEDIA_FLAG_EMBEDDED },
	{ "jpeg ZIP in scan", "image/jpeg", mk_jpeg, JPEG_ZIP_IN_SCAN, -1,
	  "ZIP end-of-central-directory record", -1 },
};
#pragma GCC diagnostic pop

static void test_validators(void **state)
{
	check_vcases(vcases, ARRAY_SIZE(vcases));
}

/* A PNG or JPEG that is also a ZIP, whatever its end record says.  JPEG
 * entropy-coded data cannot hold 0xFF 0xFF, so the ZIP64 sentinels are
 * left out there. */
static void test_zip_ends(void **state)
{
	check_zip_ends("image/png", mk_png_zip_end, 0);
	check_zip_ends("image/jpeg", mk_jpeg_zip_end, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_validators),
		cmocka_unit_test(test_zip_ends),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
