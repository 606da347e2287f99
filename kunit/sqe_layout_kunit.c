// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the user ABI of struct io_uring_sqe.
 *
 * io_uring_init() pins sqe fields at build time with BUILD_BUG_SQE_ELEM(),
 * by offset and size. This suite states the layout once more, one line per
 * member and union alias (array members by their first element), and adds
 * what the build does not check: each member's signedness (splice_fd_in is
 * signed, file_index, its alias, is not), so that a report shows exactly
 * which promise a change broke.
 */
#include <kunit/test.h>
#include <linux/splice.h>
#include <linux/stddef.h>
#include <uapi/linux/io_uring.h>

struct sqe_field_case {
	const char *name;
	size_t offset, expected_offset;
	size_t size, expected_size;
	bool is_signed, expected_signed;
};

#define SQE_FIELD(field, off, type)					\
	{								\
		.name = #field " is " #type " at " #off,		\
		.offset = offsetof(struct io_uring_sqe, field),		\
		.expected_offset = off,					\
		.size = sizeof_field(struct io_uring_sqe, field),	\
		.expected_size = sizeof(type),				\
		.is_signed = is_signed_type(typeof_member(struct io_uring_sqe, field)), \
		.expected_signed = is_signed_type(type),		\
	}

/* Every member and union alias of 6.12's sqe plus the series' two. */
static const struct sqe_field_case sqe_field_cases[] = {
	SQE_FIELD(opcode, 0, __u8),
	SQE_FIELD(flags, 1, __u8),
	SQE_FIELD(ioprio, 2, __u16),
	SQE_FIELD(fd, 4, __s32),
	SQE_FIELD(off, 8, __u64),
	SQE_FIELD(addr2, 8, __u64),
	SQE_FIELD(cmd_op, 8, __u32),
	SQE_FIELD(__pad1, 12, __u32),
	SQE_FIELD(ioctl_arg, 8, __u64),
	SQE_FIELD(addr, 16, __u64),
	SQE_FIELD(splice_off_in, 16, __u64),
	SQE_FIELD(level, 16, __u32),
	SQE_FIELD(optname, 20, __u32),
	SQE_FIELD(len, 24, __u32),
	SQE_FIELD(ioctl_cmd, 24, __u32),
	SQE_FIELD(rw_flags, 28, __u32),
	SQE_FIELD(fsync_flags, 28, __u32),
	SQE_FIELD(poll_events, 28, __u16),
	SQE_FIELD(poll32_events, 28, __u32),
	SQE_FIELD(sync_range_flags, 28, __u32),
	SQE_FIELD(msg_flags, 28, __u32),
	SQE_FIELD(timeout_flags, 28, __u32),
	SQE_FIELD(accept_flags, 28, __u32),
	SQE_FIELD(cancel_flags, 28, __u32),
	SQE_FIELD(open_flags, 28, __u32),
	SQE_FIELD(statx_flags, 28, __u32),
	SQE_FIELD(fadvise_advice, 28, __u32),
	SQE_FIELD(splice_flags, 28, __u32),
	SQE_FIELD(rename_flags, 28, __u32),
	SQE_FIELD(unlink_flags, 28, __u32),
	SQE_FIELD(hardlink_flags, 28, __u32),
	SQE_FIELD(xattr_flags, 28, __u32),
	SQE_FIELD(msg_ring_flags, 28, __u32),
	SQE_FIELD(uring_cmd_flags, 28, __u32),
	SQE_FIELD(waitid_flags, 28, __u32),
	SQE_FIELD(futex_flags, 28, __u32),
	SQE_FIELD(install_fd_flags, 28, __u32),
	SQE_FIELD(nop_flags, 28, __u32),
	SQE_FIELD(user_data, 32, __u64),
	SQE_FIELD(buf_index, 40, __u16),
	SQE_FIELD(buf_group, 40, __u16),
	SQE_FIELD(personality, 42, __u16),
	SQE_FIELD(splice_fd_in, 44, __s32),
	SQE_FIELD(file_index, 44, __u32),
	SQE_FIELD(optlen, 44, __u32),
	SQE_FIELD(addr_len, 44, __u16),
	SQE_FIELD(__pad3[0], 46, __u16),
	SQE_FIELD(addr3, 48, __u64),
	SQE_FIELD(__pad2[0], 56, __u64),
	SQE_FIELD(optval, 48, __u64),
	SQE_FIELD(cmd[0], 48, __u8),
};

static void sqe_field_case_desc(const struct sqe_field_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(sqe_field, sqe_field_cases, sqe_field_case_desc);

static void sqe_field_layout_test(struct kunit *test)
{
	const struct sqe_field_case *c = test->param_value;

	KUNIT_EXPECT_EQ_MSG(test, c->offset, c->expected_offset,
			    "offset of %s", c->name);
	KUNIT_EXPECT_EQ_MSG(test, c->size, c->expected_size,
			    "size of %s", c->name);
	KUNIT_EXPECT_EQ_MSG(test, c->is_signed, c->expected_signed,
			    "signedness of %s", c->name);
}

static void sqe_size_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sizeof(struct io_uring_sqe), 64);
}

/* sqe->opcode is a u8, so every opcode, IORING_OP_LAST included, must fit. */
static void sqe_opcode_fits_u8_test(struct kunit *test)
{
	KUNIT_EXPECT_LT(test, IORING_OP_LAST, 256);
}

/* Opcode numbers are ABI: liburing and binaries have them compiled in. */
static void sqe_opcode_numbers_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, IORING_OP_NOP, 0);
	KUNIT_EXPECT_EQ(test, IORING_OP_SPLICE, 30);
	KUNIT_EXPECT_EQ(test, IORING_OP_TEE, 33);
	KUNIT_EXPECT_EQ(test, IORING_OP_URING_CMD, 46);
	KUNIT_EXPECT_EQ(test, IORING_OP_LISTEN, 57);
	KUNIT_EXPECT_EQ(test, IORING_OP_IOCTL, 58);
}

/*
 * SPLICE_F_FD_IN_FIXED shares sqe->splice_flags with the splice(2) flags, so
 * it must never collide with one of them.
 */
static void splice_fd_in_fixed_is_not_a_splice_flag_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, SPLICE_F_FD_IN_FIXED, 1U << 31);
	KUNIT_EXPECT_EQ(test, SPLICE_F_FD_IN_FIXED & SPLICE_F_ALL, 0);
}

static struct kunit_case io_uring_sqe_layout_test_cases[] = {
	KUNIT_CASE_PARAM(sqe_field_layout_test, sqe_field_gen_params),
	KUNIT_CASE(sqe_size_test),
	KUNIT_CASE(sqe_opcode_fits_u8_test),
	KUNIT_CASE(sqe_opcode_numbers_test),
	KUNIT_CASE(splice_fd_in_fixed_is_not_a_splice_flag_test),
	{}
};

static struct kunit_suite io_uring_sqe_layout_test_suite = {
	.name = "io_uring_sqe_layout",
	.test_cases = io_uring_sqe_layout_test_cases,
};

kunit_test_suite(io_uring_sqe_layout_test_suite);

MODULE_DESCRIPTION("KUnit tests for the io_uring sqe layout");
MODULE_LICENSE("GPL");
