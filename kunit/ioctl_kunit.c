// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for IORING_OP_IOCTL's allowlist and sqe validation.
 *
 * Included at the end of io_uring/ioctl.c to reach the table and its static
 * lookups. The lookups are checked against the table itself (every entry,
 * every wrong kind of file, near misses in the direction and size bits) and
 * against a list of commands that must never be reached; prep against each
 * reserved sqe field; the issue path against real pipes, sockets and files.
 */
#include <kunit/test.h>
#include <asm/ioctls.h>
#include <linux/fiemap.h>
#include <linux/mman.h>
#include <linux/shmem_fs.h>

#include "../opdef.h"

static const char *const io_ioctl_kind_names[IO_IOCTL_NR_KINDS] = {
	[IO_IOCTL_OTHER]	= "other",
	[IO_IOCTL_PIPE]		= "pipe",
	[IO_IOCTL_SOCKET]	= "socket",
	[IO_IOCTL_TCP]		= "TCP socket",
	[IO_IOCTL_DMA_BUF]	= "dma-buf",
};

static void io_ioctl_rule_desc(const struct io_ioctl_rule *rule, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "cmd %#x on %s, %s", rule->cmd,
		 io_ioctl_kind_names[rule->kind],
		 rule->run_inline ? "inline" : "io-wq");
}

KUNIT_ARRAY_PARAM(io_ioctl_rule, io_ioctl_rules, io_ioctl_rule_desc);

/* The entry prep and issue together pick for @cmd on a file of @kind. */
static const struct io_ioctl_rule *
io_ioctl_find_rule(unsigned int cmd, enum io_ioctl_file_kind kind)
{
	const struct io_ioctl_rule *first = io_ioctl_first_rule(cmd);

	return first ? io_ioctl_rule_for_kind(first, kind) : NULL;
}

/*
 * Every entry is found for its own command and kind, and says why. Issue
 * looks only at the entries from the first one for the command on: an
 * entry after another command's is not found.
 */
static void io_ioctl_rule_is_found(struct kunit *test)
{
	const struct io_ioctl_rule *rule = test->param_value;

	KUNIT_EXPECT_PTR_EQ(test, io_ioctl_find_rule(rule->cmd, rule->kind), rule);
	KUNIT_EXPECT_NOT_NULL(test, io_ioctl_first_rule(rule->cmd));
	KUNIT_EXPECT_NOT_NULL(test, rule->run);
	KUNIT_EXPECT_NOT_NULL(test, rule->why);
	if (rule->why)
		KUNIT_EXPECT_GT(test, strlen(rule->why), 10);
	KUNIT_EXPECT_NE(test, rule->kind, IO_IOCTL_OTHER);
}

/* On any other kind of file the command is refused (or is another entry). */
static void io_ioctl_rule_wrong_kind(struct kunit *test)
{
	const struct io_ioctl_rule *rule = test->param_value;
	const struct io_ioctl_rule *found;
	enum io_ioctl_file_kind kind;

	for (kind = 0; kind < IO_IOCTL_NR_KINDS; kind++) {
		if (kind == rule->kind)
			continue;
		found = io_ioctl_find_rule(rule->cmd, kind);
		if (!found)
			continue;
		/*
		 * FIONREAD and SIOCINQ share a number: each has its entry;
		 * a TCP socket takes the socket entries too.
		 */
		KUNIT_EXPECT_TRUE_MSG(test,
				      io_ioctl_kind_covers(found->kind, kind),
				      "on %s", io_ioctl_kind_names[kind]);
		KUNIT_EXPECT_NE_MSG(test, kind, IO_IOCTL_OTHER,
				    "allowed on any file");
	}
}

/* SIOCOUTQNSD is TCP's and MPTCP's alone; they take every socket entry too. */
static void io_ioctl_outqnsd_tcp_only(struct kunit *test)
{
	KUNIT_EXPECT_NULL(test, io_ioctl_find_rule(SIOCOUTQNSD, IO_IOCTL_SOCKET));
	KUNIT_EXPECT_NOT_NULL(test, io_ioctl_find_rule(SIOCOUTQNSD, IO_IOCTL_TCP));
	KUNIT_EXPECT_NOT_NULL(test, io_ioctl_find_rule(SIOCINQ, IO_IOCTL_TCP));
	KUNIT_EXPECT_NOT_NULL(test, io_ioctl_find_rule(SIOCOUTQ, IO_IOCTL_TCP));
	KUNIT_EXPECT_FALSE(test, io_ioctl_kind_covers(IO_IOCTL_TCP, IO_IOCTL_SOCKET));
}

/*
 * io_init_req() refuses an ioprio and an IOPOLL ring for an opcode whose
 * definition does not claim them; prep leaves those two to it.
 */
static void io_ioctl_opdef(struct kunit *test)
{
	const struct io_issue_def *def = &io_issue_defs[IORING_OP_IOCTL];

	KUNIT_EXPECT_FALSE(test, def->ioprio);
	KUNIT_EXPECT_FALSE(test, def->iopoll);
	KUNIT_EXPECT_TRUE(test, def->needs_file);
	KUNIT_EXPECT_TRUE(test, def->prep == io_ioctl_prep);
	KUNIT_EXPECT_TRUE(test, def->issue == io_ioctl);
}

/*
 * The same command with other direction or size bits is another command:
 * none of them may match.
 */
static void io_ioctl_rule_near_misses(struct kunit *test)
{
	const struct io_ioctl_rule *rule = test->param_value;
	unsigned int dir = _IOC_DIR(rule->cmd), size = _IOC_SIZE(rule->cmd);
	const unsigned int sizes[] = { 0, 1, 4, 8, 16, size + 1, size - 1,
				       _IOC_SIZEMASK };
	const unsigned int dirs[] = { _IOC_NONE, _IOC_READ, _IOC_WRITE,
				      _IOC_READ | _IOC_WRITE };
	unsigned int base, cmd;
	int i;

	base = rule->cmd & ~((_IOC_DIRMASK << _IOC_DIRSHIFT) |
			     (_IOC_SIZEMASK << _IOC_SIZESHIFT));
	for (i = 0; i < ARRAY_SIZE(dirs); i++) {
		if (dirs[i] == dir)
			continue;
		cmd = base | (dirs[i] << _IOC_DIRSHIFT) | (size << _IOC_SIZESHIFT);
		KUNIT_EXPECT_NULL_MSG(test, io_ioctl_first_rule(cmd),
				       "direction %u: %#x", dirs[i], cmd);
	}
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		if ((sizes[i] & _IOC_SIZEMASK) == size)
			continue;
		cmd = base | (dir << _IOC_DIRSHIFT) |
		      ((sizes[i] & _IOC_SIZEMASK) << _IOC_SIZESHIFT);
		KUNIT_EXPECT_NULL_MSG(test, io_ioctl_first_rule(cmd),
				       "size %u: %#x", sizes[i], cmd);
	}
}

struct io_ioctl_unlisted_case {
	const char *name;
	unsigned int cmd;
};

#define UNLISTED(c) { #c, c }
/* do_vfs_ioctl()'s generic commands and neighbours of the listed ones */
static const struct io_ioctl_unlisted_case io_ioctl_unlisted_cases[] = {
	UNLISTED(FIOCLEX), UNLISTED(FIONCLEX), UNLISTED(FIONBIO),
	UNLISTED(FIOASYNC), UNLISTED(FIOQSIZE), UNLISTED(FIFREEZE),
	UNLISTED(FITHAW), UNLISTED(FIBMAP), UNLISTED(FIGETBSZ),
	UNLISTED(FICLONE), UNLISTED(FICLONERANGE), UNLISTED(FIDEDUPERANGE),
	UNLISTED(FS_IOC_FIEMAP), UNLISTED(FS_IOC_GETFLAGS),
	UNLISTED(FS_IOC_SETFLAGS), UNLISTED(FS_IOC_FSGETXATTR),
	UNLISTED(TCGETS), UNLISTED(TIOCSTI), UNLISTED(FIOSETOWN),
	UNLISTED(SIOCSPGRP), UNLISTED(SIOCATMARK), UNLISTED(SIOCGIFNAME),
	UNLISTED(SIOCGSTAMP_OLD), UNLISTED(DMA_BUF_SET_NAME_B),
	UNLISTED(DMA_BUF_IOCTL_EXPORT_SYNC_FILE), UNLISTED(0),
};

static void io_ioctl_unlisted_desc(const struct io_ioctl_unlisted_case *c,
				   char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s (%#x)", c->name, c->cmd);
}

KUNIT_ARRAY_PARAM(io_ioctl_unlisted, io_ioctl_unlisted_cases,
		  io_ioctl_unlisted_desc);

static void io_ioctl_unlisted_refused(struct kunit *test)
{
	const struct io_ioctl_unlisted_case *c = test->param_value;
	enum io_ioctl_file_kind kind;

	KUNIT_EXPECT_NULL(test, io_ioctl_first_rule(c->cmd));
	for (kind = 0; kind < IO_IOCTL_NR_KINDS; kind++)
		KUNIT_EXPECT_NULL_MSG(test, io_ioctl_find_rule(c->cmd, kind),
				      "on %s", io_ioctl_kind_names[kind]);
}

/* prep: one sqe field made non-zero per row */
struct io_ioctl_prep_case {
	const char *name;
	size_t offset, size;	/* the field; size 0: none */
	unsigned int cmd;
	bool iopoll;
	int expected;
};

#define SQE_FIELD_SET(f, err) \
	{ #f, offsetof(struct io_uring_sqe, f), \
	  sizeof_field(struct io_uring_sqe, f), FIONREAD, false, err }

static const struct io_ioctl_prep_case io_ioctl_prep_cases[] = {
	{ "valid", 0, 0, FIONREAD, false, 0 },
	{ "valid SIOCOUTQ", 0, 0, SIOCOUTQ, false, 0 },
	/* generic fields, handled before prep: they must not matter here */
	SQE_FIELD_SET(flags, 0),
	SQE_FIELD_SET(personality, 0),
	SQE_FIELD_SET(user_data, 0),
	/* refused before prep by io_init_req(): see io_ioctl_opdef */
	SQE_FIELD_SET(ioprio, 0),
	SQE_FIELD_SET(addr, -EINVAL),
	SQE_FIELD_SET(rw_flags, -EINVAL),
	SQE_FIELD_SET(buf_index, -EINVAL),
	SQE_FIELD_SET(splice_fd_in, -EINVAL),
	SQE_FIELD_SET(addr3, -EINVAL),
	SQE_FIELD_SET(__pad2, -EINVAL),
	{ "unlisted command FIONBIO", 0, 0, FIONBIO, false, -EOPNOTSUPP },
	/* refused before prep by io_init_req(): see io_ioctl_opdef */
	{ "IOPOLL ring", 0, 0, FIONREAD, true, 0 },
};

static void io_ioctl_prep_desc(const struct io_ioctl_prep_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s: %d", c->name, c->expected);
}

KUNIT_ARRAY_PARAM(io_ioctl_prep, io_ioctl_prep_cases, io_ioctl_prep_desc);

static struct io_kiocb *io_ioctl_test_req(struct kunit *test, bool iopoll)
{
	struct io_kiocb *req = kunit_kzalloc(test, sizeof(*req), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, req);
	req->ctx = kunit_kzalloc(test, sizeof(*req->ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, req->ctx);
	if (iopoll)
		req->ctx->flags |= IORING_SETUP_IOPOLL;
	return req;
}

static void io_ioctl_prep_checks(struct kunit *test)
{
	const struct io_ioctl_prep_case *c = test->param_value;
	struct io_kiocb *req = io_ioctl_test_req(test, c->iopoll);
	struct io_ioctl *ioc = io_kiocb_to_cmd(req, struct io_ioctl);
	struct io_uring_sqe sqe = {
		.opcode = IORING_OP_IOCTL,
		.ioctl_cmd = c->cmd,
		.ioctl_arg = 0x1000,
	};

	memset((char *)&sqe + c->offset, 0x01, c->size);
	KUNIT_EXPECT_EQ(test, io_ioctl_prep(req, &sqe), c->expected);
	if (!c->expected) {
		KUNIT_EXPECT_EQ(test, ioc->cmd, c->cmd);
		KUNIT_EXPECT_EQ(test, ioc->arg, 0x1000);
		KUNIT_EXPECT_PTR_EQ(test, ioc->rules,
				    io_ioctl_first_rule(c->cmd));
	}
}

/* Files of each kind, and the issue path on them. */
struct io_ioctl_files {
	struct file *pipe[2];
	struct file *shmem;
	struct file *unix_sock;
	struct file *netlink_sock;
	struct file *tcp_sock;
	struct file *udp_sock;
	unsigned long user_page;
};

static struct file *io_ioctl_test_socket(struct kunit *test, int family,
					 int type)
{
	struct socket *sock;
	struct file *file;

	if (sock_create_kern(&init_net, family, type, 0, &sock))
		return NULL;
	file = sock_alloc_file(sock, 0, NULL);	/* releases sock on error */
	return IS_ERR(file) ? NULL : file;
}

static int io_ioctl_files_init(struct kunit *test)
{
	struct io_ioctl_files *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, f);
	test->priv = f;
	KUNIT_ASSERT_EQ(test, create_pipe_files(f->pipe, 0), 0);
	f->shmem = shmem_file_setup("io_ioctl_kunit", PAGE_SIZE, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(f->shmem));
	f->unix_sock = io_ioctl_test_socket(test, AF_UNIX, SOCK_STREAM);
	f->netlink_sock = io_ioctl_test_socket(test, AF_NETLINK, SOCK_RAW);
	f->tcp_sock = io_ioctl_test_socket(test, AF_INET, SOCK_STREAM);
	f->udp_sock = io_ioctl_test_socket(test, AF_INET, SOCK_DGRAM);
	f->user_page = kunit_vm_mmap(test, NULL, 0, PAGE_SIZE,
				     PROT_READ | PROT_WRITE,
				     MAP_ANONYMOUS | MAP_PRIVATE, 0);
	if (IS_ERR_VALUE(f->user_page) || !f->user_page)
		f->user_page = 0;
	return 0;
}

static void io_ioctl_files_exit(struct kunit *test)
{
	struct io_ioctl_files *f = test->priv;
	struct file *files[] = { f->pipe[0], f->pipe[1], f->shmem,
				 f->unix_sock, f->netlink_sock, f->tcp_sock,
				 f->udp_sock };
	int i;

	for (i = 0; i < ARRAY_SIZE(files); i++)
		if (files[i] && !IS_ERR(files[i]))
			fput(files[i]);
}

static void io_ioctl_kind_of_files(struct kunit *test)
{
	struct io_ioctl_files *f = test->priv;

	KUNIT_EXPECT_EQ(test, io_ioctl_file_kind(f->pipe[0]), IO_IOCTL_PIPE);
	KUNIT_EXPECT_EQ(test, io_ioctl_file_kind(f->pipe[1]), IO_IOCTL_PIPE);
	KUNIT_EXPECT_EQ(test, io_ioctl_file_kind(f->shmem), IO_IOCTL_OTHER);
	if (!f->unix_sock || !f->netlink_sock)
		kunit_skip(test, "no AF_UNIX or AF_NETLINK sockets (CONFIG_UNIX, CONFIG_NET)");
	KUNIT_EXPECT_EQ(test, io_ioctl_file_kind(f->unix_sock), IO_IOCTL_SOCKET);
	KUNIT_EXPECT_EQ(test, io_ioctl_file_kind(f->netlink_sock), IO_IOCTL_OTHER);
	if (!f->tcp_sock || !f->udp_sock)
		kunit_skip(test, "no TCP or UDP sockets (CONFIG_INET)");
	KUNIT_EXPECT_EQ(test, io_ioctl_file_kind(f->tcp_sock), IO_IOCTL_TCP);
	KUNIT_EXPECT_EQ(test, io_ioctl_file_kind(f->udp_sock), IO_IOCTL_SOCKET);
}

static int io_ioctl_test_issue(struct kunit *test, struct file *file,
			       unsigned int cmd, unsigned long arg,
			       unsigned int issue_flags, struct io_kiocb **reqp)
{
	struct io_kiocb *req = io_ioctl_test_req(test, false);
	struct io_ioctl *ioc = io_kiocb_to_cmd(req, struct io_ioctl);

	req->file = file;
	ioc->cmd = cmd;
	ioc->arg = arg;
	ioc->rules = io_ioctl_first_rule(cmd);	/* as prep finds it */
	KUNIT_ASSERT_NOT_NULL(test, ioc->rules);
	*reqp = req;
	return io_ioctl(req, issue_flags);
}

/* FIONREAD on a pipe answers inline, and -EAGAIN while the mutex is held. */
static void io_ioctl_pipe_fionread_inline(struct kunit *test)
{
	struct io_ioctl_files *f = test->priv;
	struct pipe_inode_info *pipe = f->pipe[0]->private_data;
	int __user *uarg = (int __user *)f->user_page;
	char data[100] = {};
	struct io_kiocb *req;
	loff_t pos = 0;
	int count = -1;

	if (!f->user_page)
		kunit_skip(test, "no user memory for the argument");
	KUNIT_ASSERT_EQ(test, kernel_write(f->pipe[1], data, sizeof(data), &pos),
			sizeof(data));

	KUNIT_EXPECT_EQ(test, io_ioctl_test_issue(test, f->pipe[0], FIONREAD,
						  f->user_page,
						  IO_URING_F_NONBLOCK, &req),
			IOU_OK);
	KUNIT_EXPECT_EQ(test, req->cqe.res, 0);
	KUNIT_EXPECT_FALSE(test, req->flags & REQ_F_FAIL);
	KUNIT_EXPECT_EQ(test, get_user(count, uarg), 0);
	KUNIT_EXPECT_EQ(test, count, sizeof(data));

	mutex_lock(&pipe->mutex);
	KUNIT_EXPECT_EQ(test, io_ioctl_test_issue(test, f->pipe[0], FIONREAD,
						  f->user_page,
						  IO_URING_F_NONBLOCK, &req),
			-EAGAIN);
	mutex_unlock(&pipe->mutex);

	/* a blocking issue (io-wq) takes the mutex and answers */
	KUNIT_EXPECT_EQ(test, io_ioctl_test_issue(test, f->pipe[1], FIONREAD,
						  f->user_page, 0, &req),
			IOU_OK);
	KUNIT_EXPECT_EQ(test, req->cqe.res, 0);

	/* a bad argument pointer: -EFAULT as from ioctl(2) */
	KUNIT_EXPECT_EQ(test, io_ioctl_test_issue(test, f->pipe[0], FIONREAD,
						  PAGE_OFFSET,
						  IO_URING_F_NONBLOCK, &req),
			IOU_OK);
	KUNIT_EXPECT_EQ(test, req->cqe.res, -EFAULT);
	KUNIT_EXPECT_TRUE(test, req->flags & REQ_F_FAIL);
}

/* A listed command on the wrong file fails the request, no handler runs. */
static void io_ioctl_wrong_file_fails(struct kunit *test)
{
	struct io_ioctl_files *f = test->priv;
	struct io_kiocb *req;

	KUNIT_EXPECT_EQ(test, io_ioctl_test_issue(test, f->shmem, FIONREAD, 0,
						  IO_URING_F_NONBLOCK, &req),
			IOU_OK);
	KUNIT_EXPECT_EQ(test, req->cqe.res, -EOPNOTSUPP);
	KUNIT_EXPECT_TRUE(test, req->flags & REQ_F_FAIL);

	KUNIT_EXPECT_EQ(test, io_ioctl_test_issue(test, f->pipe[0], SIOCOUTQ, 0,
						  IO_URING_F_NONBLOCK, &req),
			IOU_OK);
	KUNIT_EXPECT_EQ(test, req->cqe.res, -EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, io_ioctl_test_issue(test, f->pipe[0],
						  DMA_BUF_IOCTL_SYNC, 0,
						  IO_URING_F_NONBLOCK, &req),
			IOU_OK);
	KUNIT_EXPECT_EQ(test, req->cqe.res, -EOPNOTSUPP);
}

/*
 * @cmd on @file, issued inline with the argument in the user page: the
 * request completes with @res, and on success the page holds @count.
 */
static void io_ioctl_expect_inline(struct kunit *test, struct file *file,
				   unsigned int cmd, int res, int count)
{
	struct io_ioctl_files *f = test->priv;
	struct io_kiocb *req;
	int got = -1;

	KUNIT_EXPECT_EQ(test, io_ioctl_test_issue(test, file, cmd, f->user_page,
						  IO_URING_F_NONBLOCK, &req),
			IOU_OK);
	KUNIT_EXPECT_EQ(test, req->cqe.res, res);
	if (res)
		return;
	KUNIT_EXPECT_EQ(test, get_user(got, (int __user *)f->user_page), 0);
	KUNIT_EXPECT_EQ(test, got, count);
}

/* A socket queue length through the socket's own handler. */
static void io_ioctl_socket_queues(struct kunit *test)
{
	struct io_ioctl_files *f = test->priv;

	if (!f->unix_sock)
		kunit_skip(test, "no AF_UNIX sockets (CONFIG_UNIX)");
	if (!f->user_page)
		kunit_skip(test, "no user memory for the argument");
	/* an unconnected stream socket has nothing queued either way */
	io_ioctl_expect_inline(test, f->unix_sock, SIOCOUTQ, 0, 0);
}

/*
 * On AF_INET sockets the queue lengths go straight to the protocol's
 * ->ioctl(): the answers (an error included) are those of the socket's
 * file handler.
 */
static void io_ioctl_inet_queues_as_handler(struct kunit *test)
{
	static const unsigned int cmds[] = { SIOCINQ, SIOCOUTQ, SIOCOUTQNSD };
	struct io_ioctl_files *f = test->priv;
	int __user *uarg = (int __user *)f->user_page;
	struct file *socks[2] = { f->tcp_sock, f->udp_sock };
	int i, j, want, res;

	if (!f->tcp_sock || !f->udp_sock)
		kunit_skip(test, "no TCP or UDP sockets (CONFIG_INET)");
	if (!f->user_page)
		kunit_skip(test, "no user memory for the argument");
	/* a listening TCP socket: SIOCINQ is -EINVAL from tcp_ioctl() */
	KUNIT_ASSERT_EQ(test, kernel_listen(sock_from_file(f->tcp_sock), 1), 0);
	for (i = 0; i < ARRAY_SIZE(socks); i++) {
		for (j = 0; j < ARRAY_SIZE(cmds); j++) {
			if (cmds[j] == SIOCOUTQNSD && socks[i] != f->tcp_sock)
				continue;
			KUNIT_ASSERT_EQ(test, put_user(-1, uarg), 0);
			res = vfs_ioctl(socks[i], cmds[j], f->user_page);
			KUNIT_ASSERT_EQ(test, get_user(want, uarg), 0);
			if (!res)	/* the handler wrote the answer */
				KUNIT_EXPECT_NE(test, want, -1);
			/* io_ioctl() must write it again over this */
			KUNIT_ASSERT_EQ(test, put_user(7, uarg), 0);
			io_ioctl_expect_inline(test, socks[i], cmds[j], res,
					       want);
		}
	}
	KUNIT_EXPECT_EQ(test, vfs_ioctl(f->tcp_sock, SIOCINQ, f->user_page),
			-EINVAL);
}

/*
 * SIOCOUTQNSD runs on TCP (and MPTCP) only: elsewhere sock_do_ioctl()
 * would read a struct ifreq at the int argument and answer -ENOTTY.
 */
static void io_ioctl_outqnsd_on_sockets(struct kunit *test)
{
	struct io_ioctl_files *f = test->priv;

	if (!f->tcp_sock || !f->udp_sock || !f->unix_sock)
		kunit_skip(test, "no TCP, UDP or AF_UNIX sockets (CONFIG_INET, CONFIG_UNIX)");
	if (!f->user_page)
		kunit_skip(test, "no user memory for the argument");
	io_ioctl_expect_inline(test, f->udp_sock, SIOCOUTQNSD, -EOPNOTSUPP, 0);
	io_ioctl_expect_inline(test, f->unix_sock, SIOCOUTQNSD, -EOPNOTSUPP, 0);
	/* an unconnected TCP socket has nothing unsent */
	io_ioctl_expect_inline(test, f->tcp_sock, SIOCOUTQNSD, 0, 0);
}

/*
 * The LSM is asked once per request: an inline try that the pipe mutex
 * turned back has asked already, and the io-wq retry does not ask again.
 */
static void io_ioctl_security_once(struct kunit *test)
{
	struct io_ioctl_files *f = test->priv;
	struct pipe_inode_info *pipe = f->pipe[0]->private_data;
	struct io_kiocb *req = io_ioctl_test_req(test, false);
	struct io_ioctl *ioc = io_kiocb_to_cmd(req, struct io_ioctl);
	struct io_uring_sqe sqe = {
		.opcode = IORING_OP_IOCTL,
		.ioctl_cmd = FIONREAD,
	};

	if (!f->user_page)
		kunit_skip(test, "no user memory for the argument");
	sqe.ioctl_arg = f->user_page;
	KUNIT_ASSERT_EQ(test, io_ioctl_prep(req, &sqe), 0);
	KUNIT_EXPECT_FALSE(test, ioc->permitted);
	req->file = f->pipe[0];

	mutex_lock(&pipe->mutex);
	KUNIT_EXPECT_EQ(test, io_ioctl(req, IO_URING_F_NONBLOCK), -EAGAIN);
	mutex_unlock(&pipe->mutex);
	KUNIT_EXPECT_TRUE(test, ioc->permitted);

	KUNIT_EXPECT_EQ(test, io_ioctl(req, 0), IOU_OK);
	KUNIT_EXPECT_EQ(test, req->cqe.res, 0);
	KUNIT_EXPECT_TRUE(test, ioc->permitted);
}

/* A protocol ->ioctl() that knows no command at all. */
static int io_ioctl_test_no_command(struct sock *sk, int cmd, int *karg)
{
	return -ENOIOCTLCMD;
}

/*
 * A protocol whose ->ioctl() does not know the command says -ENOIOCTLCMD
 * (SCTP and SIOCOUTQ): the ring must answer as ioctl(2) does, from the
 * file's handler (-ENOTTY), never with the internal errno. A UDP socket
 * given a copy of its proto whose ->ioctl() knows nothing stands in for
 * such a protocol; the copy is static, so a socket left with it after a
 * failed assertion still has a valid proto.
 */
static void io_ioctl_protocol_without_command(struct kunit *test)
{
	static struct proto no_command_proto;
	struct io_ioctl_files *f = test->priv;
	struct proto *orig;
	struct sock *sk;
	int want;

	if (!f->udp_sock)
		kunit_skip(test, "no UDP sockets (CONFIG_INET)");
	if (!f->user_page)
		kunit_skip(test, "no user memory for the argument");
	sk = sock_from_file(f->udp_sock)->sk;
	orig = READ_ONCE(sk->sk_prot);
	no_command_proto = *orig;
	no_command_proto.ioctl = io_ioctl_test_no_command;
	WRITE_ONCE(sk->sk_prot, &no_command_proto);
	want = vfs_ioctl(f->udp_sock, SIOCOUTQ, f->user_page);
	io_ioctl_expect_inline(test, f->udp_sock, SIOCOUTQ, want, 0);
	WRITE_ONCE(sk->sk_prot, orig);
	KUNIT_EXPECT_EQ(test, want, -ENOTTY);
}

static struct kunit_case io_ioctl_table_cases[] = {
	KUNIT_CASE(io_ioctl_outqnsd_tcp_only),
	KUNIT_CASE(io_ioctl_opdef),
	KUNIT_CASE_PARAM(io_ioctl_rule_is_found, io_ioctl_rule_gen_params),
	KUNIT_CASE_PARAM(io_ioctl_rule_wrong_kind, io_ioctl_rule_gen_params),
	KUNIT_CASE_PARAM(io_ioctl_rule_near_misses, io_ioctl_rule_gen_params),
	KUNIT_CASE_PARAM(io_ioctl_unlisted_refused, io_ioctl_unlisted_gen_params),
	KUNIT_CASE_PARAM(io_ioctl_prep_checks, io_ioctl_prep_gen_params),
	{}
};

static struct kunit_suite io_ioctl_table_suite = {
	.name = "io_uring_ioctl_table",
	.test_cases = io_ioctl_table_cases,
};

static struct kunit_case io_ioctl_issue_cases[] = {
	KUNIT_CASE(io_ioctl_kind_of_files),
	KUNIT_CASE(io_ioctl_pipe_fionread_inline),
	KUNIT_CASE(io_ioctl_wrong_file_fails),
	KUNIT_CASE(io_ioctl_socket_queues),
	KUNIT_CASE(io_ioctl_inet_queues_as_handler),
	KUNIT_CASE(io_ioctl_outqnsd_on_sockets),
	KUNIT_CASE(io_ioctl_protocol_without_command),
	KUNIT_CASE(io_ioctl_security_once),
	{}
};

static struct kunit_suite io_ioctl_issue_suite = {
	.name = "io_uring_ioctl_issue",
	.init = io_ioctl_files_init,
	.exit = io_ioctl_files_exit,
	.test_cases = io_ioctl_issue_cases,
};

kunit_test_suites(&io_ioctl_table_suite, &io_ioctl_issue_suite);
