extends Node

# The Godot 3 twin of run_tool4.gd (same requests, same markers), added by `gd-assets verify --run` as the
# first autoload of a scratch copy of the original project, so the original runs in the engine it was
# written for beside its migrated copy. Positions are Node2D.position, Control.rect_position and
# Spatial.translation: what Godot 4 calls `position` on each.

const MARK = "@@gd-run"
const SNAPSHOT_EVERY = 60

var _mode = "main"
var _frames = 600
var _scene_frames = 30
var _scenes = []
var _frame = 0
var _index = -1
var _current = null
var _left = 0
var _last_tree = []
var _done = false
var _starting = false  # the next scene is on its way (deferred)


func _say(parts):
	var words = PoolStringArray()
	for p in parts:
		words.append(str(p))
	printerr(MARK + " " + words.join("\t"))


func _init():
	pause_mode = Node.PAUSE_MODE_PROCESS
	process_priority = -1000000
	var file = File.new()
	var text = ""
	if file.open(OS.get_environment("GD_RUN_REQUESTS"), File.READ) == OK:
		text = file.get_as_text()
		file.close()
	var seed_value = ""
	for line in text.split("\n", false):
		var parts = line.split("\t")
		match parts[0]:
			"mode": _mode = parts[1]
			"frames": _frames = int(parts[1])
			"scene_frames": _scene_frames = int(parts[1])
			"seed": seed_value = parts[1]
			"scene": _scenes.append(parts[1])
	if seed_value != "":  # no seed asked: the engine's own start
		seed(int(seed_value))
	_say(["BEGIN", _mode])


func _position(node):
	if node is Node2D:
		return "%d,%d" % [round(node.position.x), round(node.position.y)]
	if node is Control:
		return "%d,%d" % [round(node.rect_position.x), round(node.rect_position.y)]
	if node is Spatial:
		return "%.2f,%.2f,%.2f" % [node.translation.x, node.translation.y, node.translation.z]
	return ""


func _visible(node):
	if node is CanvasItem or node is Spatial:
		return "1" if node.visible else "0"
	return ""


func _walk(node, path, out):
	for child in node.get_children():
		if child == self:
			continue
		var own = path + "/" + child.name if path != "" else child.name
		var script = child.get_script()
		var script_path = script.resource_path if script != null else ""
		var words = PoolStringArray(["NODE", own, child.get_class(), script_path, _visible(child), _position(child)])
		out.append(words.join("\t"))
		_walk(child, own, out)


func _tree():
	var out = []
	_walk(get_tree().root, "", out)
	return out


func _print_tree(lines, frame):
	_say(["TREE", frame, lines.size()])
	for line in lines:
		printerr(MARK + " " + line)


func _process(_delta):
	if _done:
		return
	_frame += 1
	if _mode == "main":
		if _frame % SNAPSHOT_EVERY == 0:
			_last_tree = _tree()
		if _frame >= _frames:
			_done = true
			_print_tree(_tree(), _frame)
			_say(["DONE", _frame])
			get_tree().quit()
		return
	if _starting:
		return
	if _current != null:
		_left -= 1
		if _left > 0:
			return
		if is_instance_valid(_current):
			_current.free()
		_say(["END", "scene", _scenes[_index]])
		_current = null
	# the next scene enters after this frame's processing, as a game's own scene change does: nodes
	# made while the engine is still processing can land where the freed ones were and be skipped
	_starting = true
	call_deferred("_start_next_scene")


func _start_next_scene():
	_starting = false
	_index += 1
	if _index >= _scenes.size():
		_done = true
		_say(["DONE", _frame])
		get_tree().quit()
		return
	var path = _scenes[_index]
	_say(["BEGIN", "scene", path])
	var packed = ResourceLoader.load(path)
	if packed is PackedScene:
		_current = packed.instance()
	if _current == null:
		_say(["END", "scene", path, "fail"])
		return
	get_tree().root.add_child(_current)
	_left = _scene_frames


func _exit_tree():
	if _done:
		return
	_say(["QUIT", _frame])
	if _mode == "main":
		_print_tree(_last_tree, _frame - _frame % SNAPSHOT_EVERY)
