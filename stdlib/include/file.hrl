%% kernel/include/file.hrl for act: the records file:read_file_info/1,2
%% returns, with OTP's fields in OTP's order.
-ifndef(FILE_HRL_).
-define(FILE_HRL_, 1).
-record(file_info, {size, type, access, atime, mtime, ctime, mode, links,
                    major_device, minor_device, inode, uid, gid}).
-record(file_descriptor, {module, data}).
-endif.
